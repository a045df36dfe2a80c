package parquet

import (
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/tracedx/tracedx/model"
)

// Summary table names (file name stems).
const (
	TableRanges = "ranges"
	TableAPI    = "api"
	TableCopies = "copies"
	TableOps    = "ops"
	TableMemory = "memory"
)

// SummaryTables are the summary tables of a report, as written beside a
// timeline by `tracedx export` (kernels first).
var SummaryTables = []string{TableKernels, TableRanges, TableAPI, TableCopies, TableOps, TableMemory, TableSteps}

var (
	f64n = arrow.PrimitiveTypes.Float64
	i64  = arrow.PrimitiveTypes.Int64
	i32  = arrow.PrimitiveTypes.Int32
)

// RangesSchema: one row per (domain, name) of annotated ranges of an input.
var RangesSchema = arrow.NewSchema([]arrow.Field{
	dict("input", false), dict("range", false), dict("domain", true), dict("kind", false),
	field("count", i64, false), field("total_ns", i64, false), field("avg_ns", f64n, true), field("median_ns", f64n, true),
	field("min_ns", i64, false), field("max_ns", i64, false), field("gpu_ns", i64, true),
}, nil)

// APISchema: one row per host API call name of an input.
var APISchema = arrow.NewSchema([]arrow.Field{
	dict("input", false), dict("call", false), dict("source", false),
	field("count", i64, false), field("total_ns", i64, false), field("avg_ns", f64n, true), field("median_ns", f64n, true),
	field("max_ns", i64, false),
}, nil)

// CopiesSchema: one row per copy kind of an input; size_* count copies per size bucket.
var CopiesSchema = arrow.NewSchema(append([]arrow.Field{
	dict("input", false), dict("kind", false),
	field("count", i64, false), field("bytes", i64, true), field("total_ns", i64, false), field("gbps", f64n, true),
	field("unsized", i64, false),
}, bucketFields()...), nil)

func bucketFields() []arrow.Field {
	names := []string{"size_lt_1kib", "size_1kib_64kib", "size_64kib_1mib", "size_1mib_16mib", "size_ge_16mib"}
	out := make([]arrow.Field, len(names))
	for i, n := range names {
		out[i] = field(n, i64, false)
	}
	return out
}

// OpsSchema: one row per (CPU op, kernel) of an input: the op's total and
// launches repeat on each of its top kernels (kernel null when it has none).
var OpsSchema = arrow.NewSchema([]arrow.Field{
	dict("input", false), dict("op", false), field("op_gpu_ns", i64, false), field("op_launches", i64, false),
	dict("kernel", true), field("kernel_count", i64, true), field("kernel_gpu_ns", i64, true),
}, nil)

// MemorySchema: one row per device of an input with allocator peaks.
var MemorySchema = arrow.NewSchema([]arrow.Field{
	dict("input", false), field("rank", i32, true), field("device", i32, false),
	field("peak_allocated_bytes", i64, true), field("peak_reserved_bytes", i64, true), field("events", i64, false),
}, nil)

// Range, API, Copy, Op and Memory are summary rows; pointers are null.
type (
	Range struct {
		Name, Domain, Kind string
		Count, TotalNS     int64
		AvgNS, MedianNS    *float64
		MinNS, MaxNS       int64
		GPUNS              *int64
	}
	API struct {
		Name, Source    string
		Count, TotalNS  int64
		AvgNS, MedianNS *float64
		MaxNS           int64
	}
	Copy struct {
		Kind    string
		Count   int64
		Bytes   *int64
		TotalNS int64
		GBps    *float64
		Unsized int64
		Sizes   []int64
	}
	Op struct {
		Name                 string
		GPUNS, Launches      int64
		Kernel               string
		KernelCount, KernGPU int64
	}
	Memory struct {
		Rank                        int
		Device                      int32
		PeakAllocated, PeakReserved *int64
		Events                      int64
	}
)

func optF(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func optI(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// SummaryRows fills the summary rows of rows from a report.
func SummaryRows(rows *Rows, r *model.Report) {
	s := &r.Summary
	for _, g := range s.Ranges {
		rows.Ranges = append(rows.Ranges, Range{Name: g.Name, Domain: g.Domain, Kind: g.Kind.String(), Count: g.Stats.Count,
			TotalNS: int64(g.Stats.Total), AvgNS: optF(g.Stats.Avg), MedianNS: optF(g.Stats.Median), MinNS: int64(g.Stats.Min),
			MaxNS: int64(g.Stats.Max), GPUNS: optI(int64(g.GPU))})
	}
	for _, a := range s.API {
		rows.API = append(rows.API, API{Name: a.Name, Source: a.Source.String(), Count: a.Stats.Count, TotalNS: int64(a.Stats.Total),
			AvgNS: optF(a.Stats.Avg), MedianNS: optF(a.Stats.Median), MaxNS: int64(a.Stats.Max)})
	}
	for _, c := range s.Copies {
		rows.Copies = append(rows.Copies, Copy{Kind: c.Kind.String(), Count: c.Count, Bytes: optI(c.Bytes), TotalNS: int64(c.Total),
			GBps: optF(c.GBps), Unsized: c.Unsized, Sizes: append([]int64(nil), c.Sizes...)})
	}
	for _, o := range s.Ops {
		if len(o.Kernels) == 0 {
			rows.Ops = append(rows.Ops, Op{Name: o.Name, GPUNS: int64(o.GPU), Launches: o.Launches, KernelCount: -1})
		}
		for _, k := range o.Kernels {
			rows.Ops = append(rows.Ops, Op{Name: o.Name, GPUNS: int64(o.GPU), Launches: o.Launches, Kernel: k.Name, KernelCount: k.Count, KernGPU: int64(k.GPU)})
		}
	}
	for _, m := range s.Memory {
		rows.Memory = append(rows.Memory, Memory{Rank: m.Rank, Device: int32(m.Device), PeakAllocated: optI(m.PeakAllocated),
			PeakReserved: optI(m.PeakReserved), Events: m.Events})
	}
	rows.Steps = StepRows(r)
}

func appendF(b array.Builder, f *float64) {
	if f == nil {
		b.AppendNull()
		return
	}
	b.(*array.Float64Builder).Append(*f)
}

func appendI(b array.Builder, v *int64) {
	if v == nil {
		b.AppendNull()
		return
	}
	b.(*array.Int64Builder).Append(*v)
}

func i64b(b array.Builder, v int64) { b.(*array.Int64Builder).Append(v) }

// appendSummary appends the summary rows of one input to table t; it
// returns the number of rows added.
func appendSummary(t *table, path string, r *Rows) int {
	b := t.rb
	switch t.name {
	case TableRanges:
		for _, g := range r.Ranges {
			appendDict(b.Field(0), path)
			appendDict(b.Field(1), g.Name)
			appendDictOrNull(b.Field(2), g.Domain)
			appendDict(b.Field(3), g.Kind)
			i64b(b.Field(4), g.Count)
			i64b(b.Field(5), g.TotalNS)
			appendF(b.Field(6), g.AvgNS)
			appendF(b.Field(7), g.MedianNS)
			i64b(b.Field(8), g.MinNS)
			i64b(b.Field(9), g.MaxNS)
			appendI(b.Field(10), g.GPUNS)
		}
		return len(r.Ranges)
	case TableAPI:
		for _, a := range r.API {
			appendDict(b.Field(0), path)
			appendDict(b.Field(1), a.Name)
			appendDict(b.Field(2), a.Source)
			i64b(b.Field(3), a.Count)
			i64b(b.Field(4), a.TotalNS)
			appendF(b.Field(5), a.AvgNS)
			appendF(b.Field(6), a.MedianNS)
			i64b(b.Field(7), a.MaxNS)
		}
		return len(r.API)
	case TableCopies:
		for _, c := range r.Copies {
			appendDict(b.Field(0), path)
			appendDict(b.Field(1), c.Kind)
			i64b(b.Field(2), c.Count)
			appendI(b.Field(3), c.Bytes)
			i64b(b.Field(4), c.TotalNS)
			appendF(b.Field(5), c.GBps)
			i64b(b.Field(6), c.Unsized)
			for i := range len(model.SizeBucketLabels) {
				var n int64
				if i < len(c.Sizes) {
					n = c.Sizes[i]
				}
				i64b(b.Field(7+i), n)
			}
		}
		return len(r.Copies)
	case TableOps:
		for _, o := range r.Ops {
			appendDict(b.Field(0), path)
			appendDict(b.Field(1), o.Name)
			i64b(b.Field(2), o.GPUNS)
			i64b(b.Field(3), o.Launches)
			if o.KernelCount < 0 {
				b.Field(4).AppendNull()
				b.Field(5).AppendNull()
				b.Field(6).AppendNull()
			} else {
				appendDict(b.Field(4), o.Kernel)
				i64b(b.Field(5), o.KernelCount)
				i64b(b.Field(6), o.KernGPU)
			}
		}
		return len(r.Ops)
	case TableMemory:
		for _, m := range r.Memory {
			appendDict(b.Field(0), path)
			if m.Rank < 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.Int32Builder).Append(int32(m.Rank))
			}
			b.Field(2).(*array.Int32Builder).Append(m.Device)
			appendI(b.Field(3), m.PeakAllocated)
			appendI(b.Field(4), m.PeakReserved)
			i64b(b.Field(5), m.Events)
		}
		return len(r.Memory)
	case TableSteps:
		return appendSteps(t, path, r)
	}
	return 0
}

// WriteSummary writes the summary tables (SummaryTables) of one report into
// dir, one file per table, atomically; input names the report's input(s).
func WriteSummary(dir, input string, r *model.Report) ([]string, error) {
	w, err := NewTablesWriter(dir, "", nil, SummaryTables)
	if err != nil {
		return nil, err
	}
	rows := &Rows{Input: Input{Path: input}, Kernels: KernelRows(r)}
	SummaryRows(rows, r)
	if err := w.Add(rows); err != nil {
		w.Abort()
		return nil, err
	}
	return w.Paths(), w.Close()
}
