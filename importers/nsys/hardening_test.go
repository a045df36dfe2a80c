package nsys

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/internal/nsysgen"
	"github.com/tracedx/tracedx/model"
)

// synthetic builds a small generated export and applies script to it.
func synthetic(t *testing.T, n int, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.sqlite")
	if err := nsysgen.Synthetic(p, n); err != nil {
		t.Fatal(err)
	}
	if script != "" {
		if err := nsysgen.Exec(p, script); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// warningWith returns the first warning whose position and message contain
// pos and msg.
func warningWith(tr *model.Trace, pos, msg string) (model.Warning, bool) {
	for _, w := range tr.Warnings {
		if strings.Contains(w.Position, pos) && strings.Contains(w.Message, msg) {
			return w, true
		}
	}
	return model.Warning{}, false
}

// TestMissingRequiredColumn: a kernel table without its start column was
// read as all zeros (busy 99.99 %, kernels of 9,520 s); it is now skipped
// with a warning, and kernels are noted as not measurable.
func TestMissingRequiredColumn(t *testing.T) {
	for _, c := range []struct{ table, column string }{
		{tKernel, "start"}, {tKernel, "end"}, {tRuntime, "start"},
	} {
		t.Run(c.table+"."+c.column, func(t *testing.T) {
			p := synthetic(t, 10, "ALTER TABLE "+c.table+" DROP COLUMN "+c.column)
			tr := importFile(t, p)
			if _, ok := warningWith(tr, "table "+c.table, "required column "+c.column+" is missing"); !ok {
				t.Errorf("no warning about the missing column: %v", tr.Warnings)
			}
			note := false
			for _, n := range tr.Caps.Notes {
				if strings.Contains(n, c.table) && strings.Contains(n, "not measurable") {
					note = true
				}
			}
			if !note {
				t.Errorf("no not-measurable note: %q", tr.Caps.Notes)
			}
			switch c.table {
			case tKernel:
				if len(tr.Kernels) != 0 || tr.Caps.Has(model.CapKernels) || len(tr.APICalls) != 10 {
					t.Errorf("%d kernels (caps %s), %d API calls", len(tr.Kernels), tr.Caps, len(tr.APICalls))
				}
			case tRuntime:
				if len(tr.APICalls) != 0 || len(tr.Kernels) != 10 {
					t.Errorf("%d API calls, %d kernels", len(tr.APICalls), len(tr.Kernels))
				}
			}
		})
	}
}

// TestBadTimes: NULL and text times were read as 0 and kept, and
// start = INT64_MIN overflowed spans while Validate said "valid". Such rows
// are now dropped with one counted warning per table and cause, on every
// scan path (the fast integer scan, the parallel scan, the driver scan of
// tables with text columns).
func TestBadTimes(t *testing.T) {
	const script = `
CREATE TABLE k2 AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL;
DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;
ALTER TABLE k2 RENAME TO CUPTI_ACTIVITY_KIND_KERNEL;
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = NULL WHERE correlationId = 2;
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = 'soon' WHERE correlationId = 3;
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -9223372036854775808 WHERE correlationId = 4;
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = 9223372036854775807 WHERE correlationId = 5;
UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -4611686018427387904, "end" = 4611686018427387903 WHERE correlationId = 6;
INSERT INTO StringIds VALUES (300, 'step');
CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, globalTid INTEGER, textId INTEGER, domainId INTEGER, text TEXT);
INSERT INTO NVTX_EVENTS VALUES (100, 900, 59, 281546145660928 + 4242, 300, 0, NULL),
  (NULL, 900, 59, 281546145660928 + 4242, 300, 0, NULL),
  ('x', 900, 59, 281546145660928 + 4242, 300, 0, NULL),
  (-9223372036854775808, 900, 59, 281546145660928 + 4242, 300, 0, NULL);
`
	for _, par := range []bool{false, true} {
		name := "sequential"
		if par {
			name = "parallel"
		}
		t.Run(name, func(t *testing.T) {
			if par {
				old := parallelAbove
				parallelAbove = 1
				defer func() { parallelAbove = old }()
			}
			tr := importFile(t, synthetic(t, 20, script)) // importFile validates
			if len(tr.Kernels) != 15 {
				t.Errorf("%d kernels, want 15", len(tr.Kernels))
			}
			if w, ok := warningWith(tr, "table "+tKernel+" row 2 column start", "2 rows of table "+tKernel+" dropped: a time is NULL or not a number"); !ok {
				t.Errorf("no warning for NULL/text times: %v", tr.Warnings)
			} else {
				t.Log(w)
			}
			if _, ok := warningWith(tr, "table "+tKernel+" row 4", "3 rows of table "+tKernel+" dropped: a time is outside"); !ok {
				t.Errorf("no warning for out-of-range times: %v", tr.Warnings)
			}
			if len(tr.Ranges) != 1 {
				t.Errorf("%d NVTX ranges, want 1", len(tr.Ranges))
			}
			if _, ok := warningWith(tr, "table NVTX_EVENTS row 2 column start", "2 rows of table NVTX_EVENTS dropped"); !ok {
				t.Errorf("no warning for NVTX NULL/text times: %v", tr.Warnings)
			}
			if _, ok := warningWith(tr, "table NVTX_EVENTS row 4", "1 rows of table NVTX_EVENTS dropped: a time is outside"); !ok {
				t.Errorf("no warning for NVTX out-of-range time: %v", tr.Warnings)
			}
			for _, k := range tr.Kernels {
				if k.End.Sub(k.Start) < 0 {
					t.Fatalf("negative duration %d..%d", k.Start, k.End)
				}
			}
		})
	}
}

// TestWALAndHotJournal: the export is opened immutable, so a -wal holding
// committed changes (SQLite sees 20 kernels, the file alone 10) or a hot
// -journal was ignored without a word. Both are now reported, and neither
// the export nor the files beside it are written.
func TestWALAndHotJournal(t *testing.T) {
	t.Run("wal", func(t *testing.T) {
		p := synthetic(t, 10, "")
		db, err := sql.Open("sqlite3", "file:"+p+"?_journal_mode=WAL")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		db.SetMaxOpenConns(1)
		// Commit 10 more kernels and keep them in the WAL (no checkpoint
		// while the connection is open).
		if _, err := db.Exec(`PRAGMA wal_autocheckpoint = 0;
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT start + 100000000, "end" + 100000000, deviceId, contextId, greenContextId, streamId,
  correlationId + 1000, globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, registersPerThread, gridX, gridY,
  gridZ, blockX, blockY, blockZ, staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId,
  sharedMemoryExecuted, graphNodeId, sharedMemoryLimitConfig FROM CUPTI_ACTIVITY_KIND_KERNEL;`); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").Scan(&n); err != nil || n != 20 {
			t.Fatalf("SQLite sees %d kernels (%v)", n, err)
		}
		before := snapshot(t, p)
		tr := importFile(t, p)
		if len(tr.Kernels) != 10 {
			t.Errorf("%d kernels, want the 10 of the file itself", len(tr.Kernels))
		}
		if _, ok := warningWith(tr, "", "-wal ("); !ok {
			t.Errorf("no WAL warning: %v", tr.Warnings)
		}
		if after := snapshot(t, p); after != before {
			t.Errorf("import changed the export or its WAL:\n%s\n%s", before, after)
		}
	})
	t.Run("hot journal", func(t *testing.T) {
		p := synthetic(t, 10, "")
		j := append(bytes.Clone(journalMagic), make([]byte, 504)...)
		if err := os.WriteFile(p+"-journal", j, 0o644); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, p)
		tr := importFile(t, p)
		if _, ok := warningWith(tr, "", "hot rollback journal"); !ok {
			t.Errorf("no hot-journal warning: %v", tr.Warnings)
		}
		if after := snapshot(t, p); after != before {
			t.Errorf("import changed the export or its journal")
		}
		// A journal whose header is zeroed (journal_mode=PERSIST after a
		// commit) is not hot.
		if err := os.WriteFile(p+"-journal", make([]byte, 512), 0o644); err != nil {
			t.Fatal(err)
		}
		if tr := importFile(t, p); len(tr.Warnings) != 0 {
			t.Errorf("cold journal reported: %v", tr.Warnings)
		}
	})
}

// snapshot describes the export and the files beside it (names, sizes and
// a hash of their bytes).
func snapshot(t *testing.T, p string) string {
	t.Helper()
	var b strings.Builder
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		data, err := os.ReadFile(p + suffix)
		if err != nil {
			continue
		}
		fmt.Fprintf(&b, "%s %d %x\n", suffix, len(data), sha256.Sum256(data))
	}
	return b.String()
}
