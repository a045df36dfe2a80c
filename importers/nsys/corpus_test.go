package nsys

import (
	"bytes"
	"context"
	"database/sql/driver"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/internal/textdiff"
	"github.com/tracedx/tracedx/model"
)

// oracle runs SQL of its own on an export, independent of the importer.
type oracle struct {
	t *testing.T
	d *db
}

func (o oracle) rows(q string, fn func(v []driver.Value)) {
	o.t.Helper()
	rows, err := o.d.c.Query(q, nil)
	if err != nil {
		o.t.Fatalf("oracle %q: %v", q, err)
	}
	defer rows.Close()
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return
			}
			o.t.Fatalf("oracle %q: %v", q, err)
		}
		fn(dest)
	}
}

func (o oracle) int(q string) int64 {
	var n int64
	o.rows(q, func(v []driver.Value) { n, _ = v[0].(int64) })
	return n
}

type nameStat struct {
	count int64
	total int64
}

func TestCorpus(t *testing.T) {
	files := corpus.Files(t, "corpus/nsys", ".sqlite")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr, err := New().Import(context.Background(), f, importers.Options{})
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if err := tr.Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			// The parallel rowid-range read gives the same trace.
			old := parallelAbove
			parallelAbove = 64
			tr2, err := New().Import(context.Background(), f, importers.Options{})
			parallelAbove = old
			if err != nil {
				t.Fatalf("parallel import: %v", err)
			}
			var d1, d2 bytes.Buffer
			tr.Dump(&d1)
			tr2.Dump(&d2)
			if !bytes.Equal(d1.Bytes(), d2.Bytes()) {
				t.Errorf("parallel import differs:\n%s", textdiff.First(d1.String(), d2.String()))
			}
			d, err := openDB(f)
			if err != nil {
				t.Fatal(err)
			}
			defer d.close()
			o := oracle{t, d}

			// Kernels: count and total duration per demangled name.
			want := map[string]nameStat{}
			if d.has(tKernel) {
				o.rows(`SELECT s.value, count(*), sum(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k
					JOIN StringIds s ON s.id = k.demangledName GROUP BY s.value`, func(v []driver.Value) {
					name, _ := asString(v[0])
					want[name] = nameStat{v[1].(int64), v[2].(int64)}
				})
			}
			got := map[string]nameStat{}
			for i := range tr.Kernels {
				k := &tr.Kernels[i]
				name := tr.Str(k.Name)
				if strings.HasPrefix(name, "[CUDA graph ") {
					continue
				}
				s := got[name]
				s.count++
				s.total += int64(k.End - k.Start)
				got[name] = s
			}
			if len(got) != len(want) {
				t.Errorf("%d kernel names, SQL says %d", len(got), len(want))
			}
			for name, w := range want {
				if got[name] != w {
					t.Errorf("kernel %.80q: got %+v, SQL says %+v", name, got[name], w)
				}
			}
			if !d.has(tKernel) || len(want) == 0 {
				if tr.Caps.Has(model.CapKernels) {
					t.Errorf("no kernel table but caps has kernels")
				}
				if !hasNote(tr, "not measurable") {
					t.Errorf("no note says kernels are not measurable: %q", tr.Caps.Notes)
				}
			}

			// Graph launches (whole-graph trace) become kernels too.
			if d.has(tGraphTrace) {
				n := o.int(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE`)
				var g int64
				for i := range tr.Kernels {
					if strings.HasPrefix(tr.Str(tr.Kernels[i].Name), "[CUDA graph ") {
						g++
					}
				}
				if g != n {
					t.Errorf("%d graph launches, SQL says %d", g, n)
				}
			}

			// NVTX: ranges and marks.
			if d.has(tNVTX) {
				wantRanges := o.int(`SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND ("end" IS NULL OR "end" >= start)`)
				wantMarks := o.int(`SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 34`)
				var ranges, marks int64
				for i := range tr.Ranges {
					switch tr.Ranges[i].Kind {
					case model.RangeNVTX:
						ranges++
					case model.RangeMark:
						marks++
					}
				}
				if ranges != wantRanges || marks != wantMarks {
					t.Errorf("NVTX ranges/marks %d/%d, SQL says %d/%d", ranges, marks, wantRanges, wantMarks)
				}
			}

			// Counts of the other tables.
			check := func(table string, got int, q string) {
				if !d.has(table) {
					return
				}
				if w := o.int(q); int64(got) != w {
					t.Errorf("%s: %d imported, SQL says %d", table, got, w)
				}
			}
			check(tRuntime, len(tr.APICalls), `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME`)
			memops := 0
			for i := range tr.MemOps {
				if tr.MemOps[i].Kind != model.MemSet {
					memops++
				}
			}
			check(tMemcpy, memops, `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY`)
			check(tSync, len(tr.Syncs), `SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION`)
			if d.has(tOSRT) {
				cols, _ := d.columns(tOSRT)
				q := `SELECT count(*) FROM OSRT_API`
				if cols["eventClass"] {
					q += ` WHERE eventClass NOT IN (31, 32)`
				}
				check(tOSRT, len(tr.OSCalls), q)
			}

			// Every device with activity is known; threads have names where
			// the export gives them.
			for _, id := range tr.GPUDevices() {
				if _, ok := tr.Device(id); !ok {
					t.Errorf("device %d has activity but is not in Devices", id)
				}
			}
			if tr.Producer == "" {
				t.Errorf("no producer")
			}
			t.Logf("%s: %d kernels, %d api, %d memops, %d syncs, %d ranges, %d osrt, %d devices, %d warnings, caps %s",
				tr.Producer, len(tr.Kernels), len(tr.APICalls), len(tr.MemOps), len(tr.Syncs), len(tr.Ranges), len(tr.OSCalls),
				len(tr.Devices), len(tr.Warnings), tr.Caps.String())
			for i, w := range tr.Warnings {
				if i >= 5 {
					break
				}
				t.Logf("  warning %s: %s", w.Position, w.Message)
			}
		})
	}
}

func hasNote(tr *model.Trace, sub string) bool {
	for _, n := range tr.Caps.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// TestCorpusUnifiedMemory: unified-memory migrations (MEMCPY rows with copy
// kinds 11-13) keep their direction, cause and address; counts and bytes per
// (copyKind, migrationCause) equal SQL's.
func TestCorpusUnifiedMemory(t *testing.T) {
	found := 0
	for _, f := range corpus.Files(t, "corpus/nsys", ".sqlite") {
		d, err := openDB(f)
		if err != nil {
			t.Fatal(err)
		}
		if !d.has(tMemcpy) {
			d.close()
			continue
		}
		type key struct {
			dir   model.MemOpKind
			cause model.MigrationCause
		}
		want := map[key][2]int64{}
		o := oracle{t, d}
		if o.int(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE copyKind BETWEEN 11 AND 13`) == 0 {
			d.close()
			continue
		}
		o.rows(`SELECT copyKind, coalesce(migrationCause, 0), count(*), sum(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY
			WHERE copyKind BETWEEN 11 AND 13 GROUP BY 1, 2`, func(v []driver.Value) {
			dir := [...]model.MemOpKind{model.MemHtoD, model.MemDtoH, model.MemDtoD}[v[0].(int64)-11]
			want[key{dir, model.MigrationCause(v[1].(int64))}] = [2]int64{v[2].(int64), v[3].(int64)}
		})
		d.close()
		if len(want) == 0 {
			continue
		}
		found++
		tr, err := New().Import(context.Background(), f, importers.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[key][2]int64{}
		for i := range tr.MemOps {
			m := &tr.MemOps[i]
			if m.Kind != model.MemUVM {
				continue
			}
			if m.Addr == 0 {
				t.Errorf("%s: migration at %d has no address", filepath.Base(f), m.Start)
			}
			k := key{m.UVMDir, m.UVMCause}
			got[k] = [2]int64{got[k][0] + 1, got[k][1] + m.Bytes}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: migrations %v, SQL says %v", filepath.Base(f), got, want)
		}
	}
	if found < 2 {
		t.Errorf("%d corpus files with unified-memory migrations, want at least 2 (memcpy-heavy, memcpy-osrt)", found)
	}
}
