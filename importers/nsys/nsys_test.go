package nsys

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/internal/nsysgen"
	"github.com/tracedx/tracedx/internal/textdiff"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixture builds testdata/<name>.sql into a temporary export.
func fixture(t testing.TB, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name+".sqlite")
	if err := nsysgen.BuildFile(dst, filepath.Join("testdata", name+".sql")); err != nil {
		t.Fatal(err)
	}
	return dst
}

func importFile(t testing.TB, path string) *model.Trace {
	t.Helper()
	tr, err := New().Import(context.Background(), path, importers.Options{})
	if err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	if err := tr.Validate(); err != nil {
		t.Fatalf("validate %s: %v", path, err)
	}
	return tr
}

func TestGolden(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("testdata", "*.sql"))
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, s := range scripts {
		name := strings.TrimSuffix(filepath.Base(s), ".sql")
		t.Run(name, func(t *testing.T) {
			tr := importFile(t, fixture(t, name))
			var buf bytes.Buffer
			if err := tr.Dump(&buf); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("dump differs from %s (run with -update to accept):\n%s", golden, textdiff.First(string(want), buf.String()))
			}
			// Same input, same output.
			var again bytes.Buffer
			importFile(t, fixture(t, name)).Dump(&again)
			if !bytes.Equal(buf.Bytes(), again.Bytes()) {
				t.Errorf("second import differs")
			}
		})
	}
}

// TestPlantedFaults checks the facts the detectors rely on, beyond the dumps.
func TestPlantedFaults(t *testing.T) {
	t.Run("sync-gap", func(t *testing.T) {
		tr := importFile(t, fixture(t, "sync-gap-2024"))
		if tr.Producer != "nsys 2024.5.1" || !tr.Clock.EpochKnown || tr.Clock.Origin != 1717171717000000000 {
			t.Errorf("producer %q clock %+v", tr.Producer, tr.Clock)
		}
		if len(tr.Devices) != 1 || tr.Devices[0].Name != "NVIDIA A100-SXM4-40GB" || tr.Devices[0].SMs != 108 {
			t.Errorf("devices %+v (non-NVIDIA adapter must be filtered)", tr.Devices)
		}
		kinds := map[model.SyncKind]int{}
		for _, s := range tr.Syncs {
			kinds[s.Kind]++
		}
		if kinds[model.SyncStream] != 1 || kinds[model.SyncContext] != 1 {
			t.Errorf("sync kinds %v: want one stream and one context sync, classified by API name", kinds)
		}
		pageable := 0
		for _, m := range tr.MemOps {
			if m.Src == model.MemPageable || m.Dst == model.MemPageable {
				pageable++
			}
		}
		if pageable != 3 {
			t.Errorf("%d pageable copies, want 3", pageable)
		}
		for _, a := range tr.APICalls {
			if n := tr.Str(tr.CallName(&a)); strings.Contains(n, "_v") {
				t.Errorf("API name %q keeps its version suffix", n)
			}
		}
		for k, v := range tr.Meta {
			if strings.Contains(v, "secret-host") || strings.Contains(k, "HOST") {
				t.Errorf("meta leaks the export host: %s=%s", k, v)
			}
		}
	})
	t.Run("python-gil", func(t *testing.T) {
		tr := importFile(t, fixture(t, "python-gil-2024"))
		if !tr.Caps.Has(model.CapGIL) || len(tr.GIL) != 3 {
			t.Errorf("GIL intervals %d caps %s", len(tr.GIL), tr.Caps)
		}
		depth := map[string]int16{}
		domain := map[string]string{}
		for _, r := range tr.Ranges {
			depth[tr.Str(r.Name)] = r.Depth
			domain[tr.Str(r.Name)] = tr.Str(tr.RangeTrack(&r).Domain)
		}
		if depth["train_step"] != 0 || depth["forward"] != 1 || depth["aten::linear"] != 2 || depth["optimizer.step"] != 1 {
			t.Errorf("NVTX depths %v", depth)
		}
		if domain["ncclAllReduce"] != "NCCL" {
			t.Errorf("domains %v", domain)
		}
		waits := 0
		for _, o := range tr.OSCalls {
			if tr.Str(o.Name) == "pthread_cond_timedwait" && tr.Thread(o.Thread).Name == "python3" {
				waits++
				if o.CallChain < 0 || tr.Str(tr.CallChains[o.CallChain][0]) != "pthread_cond_timedwait" {
					t.Errorf("call chain %d not innermost first", o.CallChain)
				}
			}
			if tr.Str(o.Name) == "[Unknown]" {
				t.Errorf("OSRT pseudo-event imported")
			}
		}
		if waits != 2 {
			t.Errorf("%d pthread_cond_timedwait waits on the Python thread, want 2", waits)
		}
	})
	t.Run("nccl", func(t *testing.T) {
		tr := importFile(t, fixture(t, "nccl-2025"))
		ops := map[string]int{}
		for _, c := range tr.Collectives {
			ops[c.Op.String()+"/"+tr.Str(c.Dtype)]++
			if c.Bytes != -1 || c.Source != model.CollFromKernel {
				t.Errorf("collective %+v", c)
			}
		}
		if ops["all_reduce/bf16"] != 1 || ops["all_gather/half"] != 1 || ops["broadcast/"] != 1 {
			t.Errorf("collectives %v", ops)
		}
		// Process 1001's CUDA device 0 is GPU 1 = cuDevice 0... and its
		// device 1 is cuDevice 1; process 1002's device 0 is GPU 0 = cuDevice 1.
		byProc := map[int32]model.DeviceID{}
		for _, k := range tr.Kernels {
			byProc[k.CorrScope] = k.Device
		}
		if byProc[1001] != 0 || byProc[1002] != 1 {
			t.Errorf("device mapping %v", byProc)
		}
		if !tr.Caps.Has(model.CapGPUMetrics) || !tr.Caps.Has(model.CapMemory) {
			t.Errorf("caps %s", tr.Caps)
		}
	})
	t.Run("old", func(t *testing.T) {
		tr := importFile(t, fixture(t, "old-2021"))
		if tr.Producer != "Nsight Systems export" || tr.Clock.EpochKnown {
			t.Errorf("producer %q clock %+v", tr.Producer, tr.Clock)
		}
		if len(tr.Syncs) != 1 || tr.Syncs[0].Kind != model.SyncStream {
			t.Errorf("syncs %+v", tr.Syncs)
		}
		if len(tr.MemOps) != 1 || tr.MemOps[0].Kind != model.MemHtoD || tr.MemOps[0].Src != model.MemPageable {
			t.Errorf("memops %+v", tr.MemOps)
		}
		if d, ok := tr.Device(0); !ok || d.Name != "Tesla V100-SXM2-16GB" {
			t.Errorf("device 0 %+v", d)
		}
	})
	t.Run("empty", func(t *testing.T) {
		tr := importFile(t, fixture(t, "empty"))
		if tr.Caps.Set != 0 || !hasNote(tr, "no events") || !hasNote(tr, "GPU kernel activity is not measurable") {
			t.Errorf("caps %s notes %q", tr.Caps, tr.Caps.Notes)
		}
	})
	t.Run("spoiled", func(t *testing.T) {
		tr := importFile(t, fixture(t, "spoiled"))
		for _, pos := range []string{
			"table CUPTI_ACTIVITY_KIND_KERNEL row 2", "table CUPTI_ACTIVITY_KIND_KERNEL row 3",
			"table CUPTI_ACTIVITY_KIND_RUNTIME row 2", "table CUPTI_ACTIVITY_KIND_RUNTIME row 3",
			"table CUPTI_ACTIVITY_KIND_RUNTIME row 4 column start",
			"table CUPTI_ACTIVITY_KIND_MEMCPY row 1", "table CUPTI_ACTIVITY_KIND_MEMCPY row 2",
			"table NVTX_EVENTS row 1", "table NVTX_EVENTS row 2", "table OSRT_API row 2",
			"table GPU_METRICS row 2", "table PYTHON_GIL_TRACE",
		} {
			found := false
			for _, w := range tr.Warnings {
				if w.Position == pos {
					found = true
				}
			}
			if !found {
				t.Errorf("no warning at %q", pos)
			}
		}
		if len(tr.Kernels) != 2 || len(tr.MemOps) != 2 {
			t.Errorf("%d kernels, %d memops: spoiled rows must be skipped or kept with warnings", len(tr.Kernels), len(tr.MemOps))
		}
	})
}

func TestNotSQLite(t *testing.T) {
	dir := t.TempDir()
	cases := map[string][]byte{
		"text.sqlite":  []byte("hello, world\n"),
		"empty.sqlite": nil,
		"json.sqlite":  []byte(`{"traceEvents": []}`),
		"trunc.sqlite": []byte("SQLite format 3\x00" + strings.Repeat("\xff", 200)),
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(sqliteHeader))
	zw.Close()
	cases["gz.sqlite"] = gz.Bytes()
	for name, data := range cases {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := New().Import(context.Background(), p, importers.Options{})
		if err == nil || !importers.IsInputError(err) {
			t.Errorf("%s: want an input error, got %v", name, err)
			continue
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error does not name the file: %v", name, err)
		}
		if name != "trunc.sqlite" && !strings.Contains(err.Error(), "byte 0") {
			t.Errorf("%s: error does not name the place: %v", name, err)
		}
	}
	if _, err := New().Import(context.Background(), filepath.Join(dir, "missing.sqlite"), importers.Options{}); !importers.IsInputError(err) {
		t.Errorf("missing file: %v", err)
	}
}

// TestReadOnly imports from a path with URI-special characters and checks the
// file is left byte-for-byte as it was, with no journal or WAL beside it.
func TestReadOnly(t *testing.T) {
	src := fixture(t, "sync-gap-2024")
	dir := filepath.Join(t.TempDir(), "odd dir?#%&=")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "a b?c=d#e%20.sqlite")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o444); err != nil {
		t.Fatal(err)
	}
	before := sha256.Sum256(data)
	tr := importFile(t, p)
	if len(tr.Kernels) == 0 {
		t.Fatal("no kernels read")
	}
	after, _ := os.ReadFile(p)
	if sha256.Sum256(after) != before {
		t.Errorf("the export was modified")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("files beside the export: %v", ents)
	}
}

func TestSniff(t *testing.T) {
	imp := New()
	if imp.Format() != model.FormatNsys {
		t.Errorf("format %q", imp.Format())
	}
	if imp.Sniff([]byte(sqliteHeader+"rest")) < 50 {
		t.Errorf("SQLite header not recognised")
	}
	for _, h := range []string{"", "SQLite format 2", `{"traceEvents"`, "# nThread 1"} {
		if imp.Sniff([]byte(h)) != 0 {
			t.Errorf("sniff %q claims it", h)
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := New().Import(ctx, fixture(t, "sync-gap-2024"), importers.Options{}); err == nil {
		t.Errorf("cancelled import succeeded")
	}
}

// TestParallelSameAsSequential reads a generated export once on one
// connection and once in parallel rowid ranges (with gaps in the rowids and
// a spoiled row) and wants byte-identical dumps, in table order.
func TestParallelSameAsSequential(t *testing.T) {
	path := filepath.Join(t.TempDir(), "syn.sqlite")
	if err := nsysgen.Synthetic(path, 30000); err != nil {
		t.Fatal(err)
	}
	if err := nsysgen.Exec(path, `DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid % 7 = 3 OR rowid BETWEEN 5000 AND 13000;
		UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET "end" = start - 1 WHERE rowid = 20001;
		UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 'x' WHERE rowid = 29999;`); err != nil {
		t.Fatal(err)
	}
	dump := func(above int64) string {
		old := parallelAbove
		parallelAbove = above
		defer func() { parallelAbove = old }()
		tr := importFile(t, path)
		var b bytes.Buffer
		tr.Dump(&b)
		return b.String()
	}
	seq, par := dump(1<<40), dump(100)
	if seq != par {
		t.Fatalf("parallel read differs from sequential:\n%s", textdiff.First(seq, par))
	}
	for _, w := range []string{"table CUPTI_ACTIVITY_KIND_KERNEL row 20001", "table CUPTI_ACTIVITY_KIND_RUNTIME row 29999 column start"} {
		if !strings.Contains(seq, w) {
			t.Errorf("no warning at %s", w)
		}
	}
}

// TestSparseRowids: a hostile export with rowids 1 .. n and 2^62 must not
// be dealt out in 2^50 rowid ranges (a hang); it is read sequentially.
func TestSparseRowids(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse.sqlite")
	if err := nsysgen.Synthetic(path, 2000); err != nil {
		t.Fatal(err)
	}
	if err := nsysgen.Exec(path, `INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = 1;
		UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET rowid = 4611686018427387904 WHERE rowid = 2001;`); err != nil {
		t.Fatal(err)
	}
	old := parallelAbove
	parallelAbove = 10
	defer func() { parallelAbove = old }()
	type result struct {
		tr  *model.Trace
		err error
	}
	done := make(chan result, 1)
	go func() {
		tr, err := New().Import(context.Background(), path, importers.Options{})
		done <- result{tr, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			t.Fatal(res.err)
		}
		if err := res.tr.Validate(); err != nil {
			t.Fatal(err)
		}
		if tr := res.tr; len(tr.Kernels) != 2001 {
			t.Errorf("%d kernels, want 2001", len(tr.Kernels))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("import hangs on sparse rowids")
	}
}
