package parquet

import (
	"context"
	"fmt"
	"github.com/tracedx/tracedx/export/parquet/parquettest"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tracedx/tracedx/model"
)

func sampleRows(n int) []*Rows {
	var out []*Rows
	for i := 0; i < n; i++ {
		path := fmt.Sprintf("traces/job%03d/rank0.json", i)
		r := &Rows{Input: Input{Path: path, Digest: fmt.Sprintf("%064x", i), Format: "kineto", Status: StatusOK, Rank: i % 4, Bytes: int64(1000 + i), Findings: 2}}
		if i%5 == 4 {
			r.Input = Input{Path: path, Digest: fmt.Sprintf("%064x", i), Status: StatusError, Error: "line 3: bad", Rank: model.NoRank, Bytes: 3}
			out = append(out, r)
			continue
		}
		r.Metrics = []Metric{{Device: "rank0/gpu0", Name: "gpu.idle_pct", Value: float64(i) / 2}, {Name: "findings.error", Value: 1}}
		r.Findings = []Finding{
			{Rule: "kernel-gap", Severity: "error", Layer: "scheduling", Title: "GPU idle", Message: fmt.Sprintf("idle %d%%", i), Confidence: "measured",
				HasEvidence: true, EvRank: 0, EvDevice: 0, EvStream: 7, EvStartNS: int64(i), EvEndNS: int64(i) + 10},
			{Rule: "trace-health", Severity: "info", Layer: "all", Title: "health", Message: "ok", Confidence: "measured", EvDevice: -1, EvStream: -1},
		}
		r.Kernels = []Kernel{{Name: "gemm", Count: 3, TotalNS: 300, MinNS: 90, MaxNS: 110}, {Name: fmt.Sprintf("k%d", i%3), Count: 1, TotalNS: 5, MinNS: 5, MaxNS: 5}}
		out = append(out, r)
	}
	return out
}

func readTable(t *testing.T, path string, mem memory.Allocator) arrow.Table {
	t.Helper()
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	if v := rdr.MetaData().KeyValueMetadata().FindValue("tracedx.dataset_version"); v == nil || *v != DatasetVersion {
		t.Errorf("%s: dataset version metadata missing", path)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestWriteReadBack(t *testing.T) {
	wmem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer wmem.AssertSize(t, 0)
	dir := t.TempDir()
	w, err := NewWriter(dir, ShardSuffix(1, 3), wmem)
	if err != nil {
		t.Fatal(err)
	}
	w.flushRows = 7 // several record batches (row groups) per table
	rows := sampleRows(20)
	for _, r := range rows {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Only the final files remain: no temporaries.
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var want []string
	for _, tb := range Tables {
		want = append(want, FileName(tb, ShardSuffix(1, 3)))
	}
	sort.Strings(want)
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("files = %v", names)
	}

	rmem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer rmem.AssertSize(t, 0)

	// inputs
	tbl := readTable(t, filepath.Join(dir, "inputs-shard-1-of-3.parquet"), rmem)
	if tbl.NumRows() != 20 {
		t.Errorf("inputs rows = %d", tbl.NumRows())
	}
	for i, f := range InputsSchema.Fields() {
		g := tbl.Schema().Field(i)
		if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || g.Nullable != f.Nullable {
			t.Errorf("inputs column %d read back as %v, want %v", i, g, f)
		}
	}
	got := strs(t, tbl, "input")
	if got[0] != "traces/job000/rank0.json" || got[19] != "traces/job019/rank0.json" {
		t.Errorf("inputs = %v", got)
	}
	status := strs(t, tbl, "status")
	errs := nullableStrings(t, tbl, "error")
	ranks := int64s(t, tbl, "rank")
	if status[4] != StatusError || errs[4] != "line 3: bad" || ranks[4] != nil || status[3] != StatusOK || errs[3] != "<null>" || *ranks[3] != 3 {
		t.Errorf("row 3/4: %v %v %v / %v %v %v", status[3], errs[3], ranks[3], status[4], errs[4], ranks[4])
	}
	tbl.Release()

	// findings: 16 ok inputs × 2
	tbl = readTable(t, filepath.Join(dir, "findings-shard-1-of-3.parquet"), rmem)
	if tbl.NumRows() != 32 {
		t.Errorf("findings rows = %d", tbl.NumRows())
	}
	rules := strs(t, tbl, "rule")
	starts := int64s(t, tbl, "ev_start_ns")
	devs := int64s(t, tbl, "ev_device")
	if rules[0] != "kernel-gap" || rules[1] != "trace-health" || starts[0] == nil || *starts[0] != 0 || starts[1] != nil || devs[1] != nil {
		t.Errorf("findings: %v %v %v", rules[:2], starts[:2], devs[:2])
	}
	if f := tbl.Schema().Field(1); f.Type.ID() != arrow.DICTIONARY {
		t.Errorf("rule column type = %v, want dictionary", f.Type)
	}
	tbl.Release()

	// kernels: sum of total_ns
	tbl = readTable(t, filepath.Join(dir, "kernels-shard-1-of-3.parquet"), rmem)
	var total int64
	for _, v := range int64s(t, tbl, "total_ns") {
		total += *v
	}
	if tbl.NumRows() != 32 || total != 16*305 {
		t.Errorf("kernels rows=%d total=%d", tbl.NumRows(), total)
	}
	tbl.Release()

	tbl = readTable(t, filepath.Join(dir, "metrics-shard-1-of-3.parquet"), rmem)
	devices := nullableStrings(t, tbl, "device")
	if tbl.NumRows() != 32 || devices[0] != "rank0/gpu0" || devices[1] != "<null>" {
		t.Errorf("metrics rows=%d devices=%v", tbl.NumRows(), devices[:2])
	}
	tbl.Release()
}

func TestAbortLeavesNothing(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	w, err := NewWriter(dir, "", mem)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sampleRows(3) {
		w.Add(r)
	}
	w.Abort()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("files left after Abort: %v", ents)
	}
	if err := w.Add(sampleRows(1)[0]); err == nil {
		t.Error("Add after Abort succeeded")
	}
}

func TestEmptyDataset(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	w, err := NewWriter(dir, "", mem)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tbl := readTable(t, filepath.Join(dir, "findings.parquet"), mem)
	defer tbl.Release()
	if tbl.NumRows() != 0 {
		t.Errorf("rows = %d", tbl.NumRows())
	}
}

// column helpers: flatten a (possibly dictionary) column of a table.

func column(t *testing.T, tbl arrow.Table, name string) *arrow.Chunked {
	t.Helper()
	idx := tbl.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("no column %s", name)
	}
	return tbl.Column(idx[0]).Data()
}

func nullableStrings(t *testing.T, tbl arrow.Table, name string) []string {
	var out []string
	for _, chunk := range column(t, tbl, name).Chunks() {
		for i := 0; i < chunk.Len(); i++ {
			if chunk.IsNull(i) {
				out = append(out, "<null>")
				continue
			}
			switch a := chunk.(type) {
			case *array.Dictionary:
				out = append(out, a.Dictionary().(*array.String).Value(a.GetValueIndex(i)))
			case *array.String:
				out = append(out, a.Value(i))
			default:
				t.Fatalf("column %s: type %T", name, chunk)
			}
		}
	}
	return out
}

func strs(t *testing.T, tbl arrow.Table, name string) []string {
	return nullableStrings(t, tbl, name)
}

func int64s(t *testing.T, tbl arrow.Table, name string) []*int64 {
	var out []*int64
	for _, chunk := range column(t, tbl, name).Chunks() {
		for i := 0; i < chunk.Len(); i++ {
			if chunk.IsNull(i) {
				out = append(out, nil)
				continue
			}
			var v int64
			switch a := chunk.(type) {
			case *array.Int32:
				v = int64(a.Value(i))
			case *array.Int64:
				v = a.Value(i)
			default:
				t.Fatalf("column %s: type %T", name, chunk)
			}
			out = append(out, &v)
		}
	}
	return out
}

func TestReadText(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	w, err := NewWriter(dir, "", mem)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sampleRows(5) {
		w.Add(r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines, err := parquettest.ReadText(filepath.Join(dir, "inputs.parquet"), mem)
	if err != nil {
		t.Fatal(err)
	}
	want := "input=traces/job004/rank0.json|digest=" + fmt.Sprintf("%064x", 4) + "|format=<null>|status=error|error=line 3: bad|rank=<null>|bytes=3|gates_failed=0|findings=0"
	if len(lines) != 5 || lines[4] != want {
		t.Errorf("lines = %q\nwant last %q", lines, want)
	}
}

func TestDictionaryPages(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sampleRows(10) {
		w.Add(r)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rdr, err := file.OpenParquetFile(filepath.Join(dir, "findings.parquet"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Close()
	rg := rdr.MetaData().RowGroup(0)
	for i, f := range FindingsSchema.Fields() {
		cc, err := rg.ColumnChunk(i)
		if err != nil {
			t.Fatal(err)
		}
		if want := f.Type.ID() == arrow.DICTIONARY; cc.HasDictionaryPage() != want {
			t.Errorf("column %s: dictionary page %v, want %v", f.Name, cc.HasDictionaryPage(), want)
		}
	}
}

// TestSummaryTablesReadBack writes the summary tables of a generated
// report's rows and reads them back: nulls for unknowns, never -1.
func TestSummaryTablesReadBack(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	med := 1.5
	dev := int32(2)
	gpu := int64(700)
	bs := int64(8)
	rows := &Rows{Input: Input{Path: "a.json", Digest: "x", Status: StatusOK, Rank: 0},
		Kernels: []Kernel{{Name: "k", Count: 2, TotalNS: 3, MinNS: 1, MaxNS: 2, AvgNS: &med, MedianNS: &med, Class: "computation", Device: &dev}, {Name: "h", Count: 1, TotalNS: 1, MinNS: 1, MaxNS: 1}},
		Ranges:  []Range{{Name: "step", Kind: "step", Count: 1, TotalNS: 9, MinNS: 9, MaxNS: 9, GPUNS: &gpu}, {Name: "r", Domain: "d", Kind: "nvtx", Count: 1}},
		API:     []API{{Name: "cudaLaunchKernel", Source: "runtime", Count: 3, TotalNS: 30, MaxNS: 12}},
		Copies:  []Copy{{Kind: "HtoD", Count: 2, TotalNS: 10, Sizes: []int64{1, 0, 0, 0, 0}, Unsized: 1}},
		Ops:     []Op{{Name: "aten::mm", GPUNS: 5, Launches: 1, Kernel: "k", KernelCount: 1, KernGPU: 5}, {Name: "aten::empty", KernelCount: -1}},
		Memory:  []Memory{{Rank: -1, Device: 0, Events: 3}},
		Steps: []Step{{Rank: 0, Index: 0, Name: "step[DECODE bs=8]", Engine: "sglang", Phase: "decode", BatchSize: &bs, StartNS: 10, EndNS: 30, TimeNS: 25,
			BusyNS: &gpu, IdleAfterNS: nil, GraphLaunches: 1}},
	}
	if err := w.Add(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		TableKernels: {"input=a.json|kernel=k|count=2|total_ns=3|min_ns=1|max_ns=2|avg_ns=1.5|median_ns=1.5|p90_ns=<null>|stddev_ns=<null>|class=computation|device=2",
			"input=a.json|kernel=h|count=1|total_ns=1|min_ns=1|max_ns=1|avg_ns=<null>|median_ns=<null>|p90_ns=<null>|stddev_ns=<null>|class=<null>|device=<null>"},
		TableRanges: {"input=a.json|range=step|domain=<null>|kind=step|count=1|total_ns=9|avg_ns=<null>|median_ns=<null>|min_ns=9|max_ns=9|gpu_ns=700",
			"input=a.json|range=r|domain=d|kind=nvtx|count=1|total_ns=0|avg_ns=<null>|median_ns=<null>|min_ns=0|max_ns=0|gpu_ns=<null>"},
		TableAPI:    {"input=a.json|call=cudaLaunchKernel|source=runtime|count=3|total_ns=30|avg_ns=<null>|median_ns=<null>|max_ns=12"},
		TableCopies: {"input=a.json|kind=HtoD|count=2|bytes=<null>|total_ns=10|gbps=<null>|unsized=1|size_lt_1kib=1|size_1kib_64kib=0|size_64kib_1mib=0|size_1mib_16mib=0|size_ge_16mib=0"},
		TableOps: {"input=a.json|op=aten::mm|op_gpu_ns=5|op_launches=1|kernel=k|kernel_count=1|kernel_gpu_ns=5",
			"input=a.json|op=aten::empty|op_gpu_ns=0|op_launches=0|kernel=<null>|kernel_count=<null>|kernel_gpu_ns=<null>"},
		TableMemory: {"input=a.json|rank=<null>|device=0|peak_allocated_bytes=<null>|peak_reserved_bytes=<null>|events=3"},
		TableSteps:  {"input=a.json|rank=0|index=0|name=step[DECODE bs=8]|engine=sglang|phase=decode|batch_size=8|tokens=<null>|kv_len=<null>|start_ns=10|end_ns=30|time_ns=25|busy_ns=700|idle_ns=<null>|idle_before_next_ns=<null>|kernels=<null>|graph_launches=1"},
	}
	for tb, w := range want {
		got, err := parquettest.ReadText(filepath.Join(dir, FileName(tb, "")), nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("%s:\n got %q\nwant %q", tb, got, w)
		}
	}
}
