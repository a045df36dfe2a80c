package timeline

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sampleTrace is a small trace with one row or more in every table.
func sampleTrace(rank int) *model.Trace {
	b := fixture.New(fmt.Sprintf("rank%d.json", rank), model.FormatKineto)
	b.T.Rank = rank
	b.T.WorldSize = 2
	th := b.Thread(7, "main")
	b.Range(th, model.RangeStep, "ProfilerStep#1", 0, 100)
	b.Range(th, model.RangeCPUOp, "aten::mm", 1, 20)
	b.Kernel(0, 7, "sgemm_128x64", 10, 30, th, 2)
	b.Kernel(0, 7, "relu_kernel", 40, 45, th, 21)
	b.Kernel(0, 7, "sgemm_128x64", 50, 70, model.NoThread, 0)
	b.Copy(0, 8, model.MemHtoD, model.MemPageable, model.MemDevice, 4096, 71, 75, th, "cudaMemcpyAsync", 60, 62)
	b.Collective(0, 9, model.CollAllReduce, 1<<20, 80, 95, th, 76)
	b.T.Kernels[0].Config = b.T.InternConfig(model.LaunchConfig{Grid: [3]int32{4, 2, 1}, Block: [3]int32{128, 1, 1}, Registers: 64, Stream: 7})
	b.T.Counters = append(b.T.Counters, model.CounterSeries{Name: b.T.Intern("SM Active"), Unit: b.T.Intern("%"), Device: 0})
	b.T.Samples = append(b.T.Samples, model.CounterSample{Time: fixture.US(10), Value: 55.5, Series: 0},
		model.CounterSample{Time: fixture.US(60), Value: 80, Series: 0})
	b.T.Syncs = append(b.T.Syncs, model.SyncEvent{Start: fixture.US(31), End: fixture.US(39), Device: 0, Stream: 7, Kind: model.SyncStream, Correlation: 9})
	b.T.OSCalls = append(b.T.OSCalls, model.OSCall{Start: fixture.US(32), End: fixture.US(38), Thread: th, Name: b.T.Intern("pthread_cond_wait"), CallChain: -1})
	b.T.GIL = append(b.T.GIL, model.GILInterval{Start: fixture.US(32), End: fixture.US(33), Thread: th, State: model.GILHeld})
	b.T.MemEvents = append(b.T.MemEvents, model.MemEvent{Time: fixture.US(5), Bytes: 1024, Addr: 0xdead, TotalAllocated: 1024, TotalReserved: -1, Thread: th, Device: 0})
	return b.Build()
}

func sampleSet() *model.TraceSet {
	return fixture.Set(sampleTrace(0), sampleTrace(1))
}

// value returns row i of a as a Go value: nil, int64, float64 or string.
func value(a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Int32:
		return int64(a.Value(i))
	case *array.Int64:
		return a.Value(i)
	case *array.Float64:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Dictionary:
		return value(a.Dictionary(), a.GetValueIndex(i))
	}
	return fmt.Sprintf("unsupported %T", a)
}

// rowsOf flattens record batches into rows of name → value.
func rowsOf(recs []arrow.RecordBatch) []map[string]any {
	var out []map[string]any
	for _, rec := range recs {
		for i := 0; i < int(rec.NumRows()); i++ {
			m := map[string]any{}
			for c := 0; c < int(rec.NumCols()); c++ {
				m[rec.ColumnName(c)] = value(rec.Column(c), i)
			}
			out = append(out, m)
		}
	}
	return out
}

func readArrow(t *testing.T, mem memory.Allocator, data []byte) (*arrow.Schema, []map[string]any) {
	t.Helper()
	r, err := ipc.NewFileReader(bytes.NewReader(data), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		recs = append(recs, rec)
	}
	return r.Schema(), rowsOf(recs)
}

func readParquet(t *testing.T, mem memory.Allocator, data []byte) (*arrow.Schema, []map[string]any) {
	t.Helper()
	tbl, err := pqarrow.ReadTable(context.Background(), bytes.NewReader(data), nil, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1<<20)
	defer tr.Release()
	var recs []arrow.RecordBatch
	for tr.Next() {
		rec := tr.RecordBatch()
		rec.Retain()
		defer rec.Release()
		recs = append(recs, rec)
	}
	return tbl.Schema(), rowsOf(recs)
}

func TestRoundTrip(t *testing.T) {
	set := sampleSet()
	for _, f := range []Format{Arrow, Parquet} {
		t.Run(string(f), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			got := map[string][]map[string]any{}
			for _, name := range Tables() {
				var buf bytes.Buffer
				n, err := WriteTable(&buf, set, name, f, Options{Allocator: mem, BatchRows: 2})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				var schema *arrow.Schema
				var rows []map[string]any
				if f == Arrow {
					schema, rows = readArrow(t, mem, buf.Bytes())
				} else {
					schema, rows = readParquet(t, mem, buf.Bytes())
				}
				if int64(len(rows)) != n {
					t.Errorf("%s: wrote %d rows, read %d", name, n, len(rows))
				}
				want := Schema(name)
				if len(schema.Fields()) != len(want.Fields()) {
					t.Fatalf("%s: %d fields, want %d", name, len(schema.Fields()), len(want.Fields()))
				}
				for i, fld := range want.Fields() {
					if schema.Field(i).Name != fld.Name || !arrow.TypeEqual(schema.Field(i).Type, fld.Type) {
						t.Errorf("%s: field %d = %s %s, want %s %s", name, i, schema.Field(i).Name, schema.Field(i).Type, fld.Name, fld.Type)
					}
				}
				got[name] = rows
			}
			checkRows(t, set, got)
		})
	}
}

func checkRows(t *testing.T, set *model.TraceSet, got map[string][]map[string]any) {
	t.Helper()
	wantN := map[string]int{}
	for _, tr := range set.Traces {
		wantN[TableKernels] += len(tr.Kernels)
		wantN[TableMemOps] += len(tr.MemOps)
		wantN[TableAPICalls] += len(tr.APICalls)
		wantN[TableRanges] += len(tr.Ranges)
		wantN[TableCollectives] += len(tr.Collectives)
		wantN[TableCounters] += len(tr.Samples)
		wantN[TableSyncs] += len(tr.Syncs)
		wantN[TableOSCalls] += len(tr.OSCalls)
		wantN[TableGIL] += len(tr.GIL)
		wantN[TableMemory] += len(tr.MemEvents)
	}
	if len(wantN) != len(Tables()) {
		t.Errorf("checkRows knows %d tables, the package %d", len(wantN), len(Tables()))
	}
	for name, n := range wantN {
		if len(got[name]) != n {
			t.Errorf("%s: %d rows, want %d", name, len(got[name]), n)
		}
	}
	k := got[TableKernels][0]
	wantK := map[string]any{"rank": int64(0), "device": int64(0), "stream": int64(7), "start_ns": int64(10000),
		"end_ns": int64(30000), "dur_ns": int64(20000), "name": "sgemm_128x64", "short_name": nil, "correlation": int64(1),
		"grid_x": int64(4), "grid_y": int64(2), "block_x": int64(128), "registers": int64(64), "graph_id": int64(0)}
	for c, v := range wantK {
		if k[c] != v {
			t.Errorf("kernels[0].%s = %#v, want %#v", c, k[c], v)
		}
	}
	// Rank 1's rows follow rank 0's.
	if r := got[TableKernels][len(got[TableKernels])-1]["rank"]; r != int64(1) {
		t.Errorf("last kernel rank = %v, want 1", r)
	}
	m := got[TableMemOps][0]
	for c, v := range map[string]any{"kind": "HtoD", "src_kind": "pageable", "dst_kind": "device", "bytes": int64(4096), "stream": int64(8), "dur_ns": int64(4000)} {
		if m[c] != v {
			t.Errorf("memops[0].%s = %#v, want %#v", c, m[c], v)
		}
	}
	a := got[TableAPICalls][0]
	for c, v := range map[string]any{"pid": int64(100), "tid": int64(7), "name": "cudaLaunchKernel", "class": "launch", "source": "runtime", "correlation": int64(1)} {
		if a[c] != v {
			t.Errorf("api_calls[0].%s = %#v, want %#v", c, a[c], v)
		}
	}
	r := got[TableRanges][0]
	for c, v := range map[string]any{"name": "ProfilerStep#1", "kind": "step", "depth": int64(0), "device": nil, "stream": nil, "domain": nil, "tid": int64(7)} {
		if r[c] != v {
			t.Errorf("ranges[0].%s = %#v, want %#v", c, r[c], v)
		}
	}
	if d := got[TableRanges][1]["depth"]; d != int64(1) {
		t.Errorf("ranges[1].depth = %v, want 1", d)
	}
	cl := got[TableCollectives][0]
	for c, v := range map[string]any{"op": "all_reduce", "source": "kernel", "bytes": int64(1 << 20), "seq": nil, "group": "0", "group_size": nil, "group_rank": int64(0)} {
		if cl[c] != v {
			t.Errorf("collectives[0].%s = %#v, want %#v", c, cl[c], v)
		}
	}
	s := got[TableCounters][1]
	for c, v := range map[string]any{"name": "SM Active", "unit": "%", "value": 80.0, "time_ns": int64(60000), "device": int64(0)} {
		if s[c] != v {
			t.Errorf("counters[1].%s = %#v, want %#v", c, s[c], v)
		}
	}
}

func TestMoreTables(t *testing.T) {
	set := sampleSet()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	want := map[string]map[string]any{
		TableSyncs:   {"kind": "stream", "stream": int64(7), "dur_ns": int64(8000), "correlation": int64(9)},
		TableOSCalls: {"name": "pthread_cond_wait", "tid": int64(7), "pid": int64(100), "start_ns": int64(32000)},
		TableGIL:     {"state": "held", "tid": int64(7), "dur_ns": int64(1000)},
		TableMemory:  {"bytes": int64(1024), "addr": int64(0xdead), "total_allocated": int64(1024), "total_reserved": nil, "device": int64(0), "time_ns": int64(5000)},
	}
	for name, cols := range want {
		var buf bytes.Buffer
		if _, err := WriteTable(&buf, set, name, Parquet, Options{Allocator: mem}); err != nil {
			t.Fatal(err)
		}
		_, rows := readParquet(t, mem, buf.Bytes())
		if len(rows) != 2 {
			t.Fatalf("%s: %d rows", name, len(rows))
		}
		for c, v := range cols {
			if rows[0][c] != v {
				t.Errorf("%s[0].%s = %#v, want %#v", name, c, rows[0][c], v)
			}
		}
	}
}

func TestRangeAndOffsets(t *testing.T) {
	set := sampleSet()
	set.Offsets[1] = 1000 // rank 1 runs 1µs later on the set clock
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var buf bytes.Buffer
	// [35µs, 45µs] catches relu_kernel of both ranks only; rank 1's sgemm
	// ends at 31µs on the set clock, outside.
	win := &model.Interval{Start: 35000, End: 45000}
	n, err := WriteTable(&buf, set, TableKernels, Arrow, Options{Allocator: mem, Range: win})
	if err != nil {
		t.Fatal(err)
	}
	_, rows := readArrow(t, mem, buf.Bytes())
	if n != 2 || len(rows) != 2 {
		t.Fatalf("rows = %d/%d, want 2", n, len(rows))
	}
	if rows[1]["rank"] != int64(1) || rows[1]["start_ns"] != int64(41000) || rows[1]["name"] != "relu_kernel" {
		t.Errorf("rank 1 row = %v", rows[1])
	}
}

func TestEmptyTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	set := fixture.Set(fixture.New("empty.json", model.FormatKineto).Build())
	for _, f := range []Format{Arrow, Parquet} {
		var buf bytes.Buffer
		n, err := WriteTable(&buf, set, TableKernels, f, Options{Allocator: mem})
		if err != nil || n != 0 {
			t.Fatalf("%s: n=%d err=%v", f, n, err)
		}
		var rows []map[string]any
		if f == Arrow {
			_, rows = readArrow(t, mem, buf.Bytes())
		} else {
			_, rows = readParquet(t, mem, buf.Bytes())
		}
		if len(rows) != 0 {
			t.Errorf("%s: %d rows", f, len(rows))
		}
	}
}

func TestWriteDirDeterministic(t *testing.T) {
	dir := t.TempDir()
	set := sampleSet()
	files, err := WriteDir(context.Background(), filepath.Join(dir, "a"), set, Parquet, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(Tables()) {
		t.Fatalf("%d files", len(files))
	}
	if _, err := WriteDir(context.Background(), filepath.Join(dir, "b"), set, Parquet, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		a, _ := os.ReadFile(f.Path)
		b, _ := os.ReadFile(filepath.Join(dir, "b", filepath.Base(f.Path)))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs between runs", filepath.Base(f.Path))
		}
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "a"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

// TestDocs checks that docs/timeline.md holds the schema tables as generated.
func TestDocs(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "timeline.md")
	gen := SchemaMarkdown()
	data, err := os.ReadFile(path)
	if *update {
		text := string(data)
		const begin, end = "<!-- schema:begin -->\n", "<!-- schema:end -->"
		i, j := strings.Index(text, begin), strings.Index(text, end)
		if i < 0 || j < i {
			t.Fatalf("%s lacks the schema markers", path)
		}
		text = text[:i+len(begin)] + gen + text[j:]
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), gen) {
		t.Errorf("%s is out of date with the schema; run go test ./export/timeline -run TestDocs -update", path)
	}
}

// bigSet is a synthetic trace with n kernels, n launch calls and n/10 ranges.
func bigSet(n int) *model.TraceSet {
	b := fixture.New("big.json", model.FormatKineto)
	th := b.Thread(1, "main")
	names := make([]string, 64)
	for i := range names {
		names[i] = fmt.Sprintf("kernel_%02d<float, 128>", i)
	}
	for i := 0; i < n; i++ {
		st := float64(i) * 10
		b.Kernel(0, model.StreamID(7+i%4), names[i%len(names)], st+3, st+9, th, st)
		if i%10 == 0 {
			b.Range(th, model.RangeCPUOp, names[(i/10)%len(names)], st, st+50)
		}
	}
	return fixture.Set(b.Build())
}

func BenchmarkWriteArrow(b *testing.B)   { benchWrite(b, Arrow) }
func BenchmarkWriteParquet(b *testing.B) { benchWrite(b, Parquet) }

func benchWrite(b *testing.B, f Format) {
	set := bigSet(200_000)
	b.ResetTimer()
	var rows int64
	for i := 0; i < b.N; i++ {
		rows = 0
		for _, name := range Tables() {
			n, err := WriteTable(io.Discard, set, name, f, Options{})
			if err != nil {
				b.Fatal(err)
			}
			rows += n
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// FuzzParseRange checks that ParseRange never panics and that what it
// accepts is a well-ordered window that prints back to itself.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"0:1", "1700000000000000000:1700000000050000000", "-5:5", "5:1", ":", "a:b", " 1 : 2 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		iv, err := ParseRange(s)
		if err != nil {
			return
		}
		if iv.End < iv.Start {
			t.Fatalf("%q → inverted %v", s, iv)
		}
		again, err := ParseRange(fmt.Sprintf("%d:%d", iv.Start, iv.End))
		if err != nil || again != iv {
			t.Fatalf("%q → %v → %v, %v", s, iv, again, err)
		}
	})
}
