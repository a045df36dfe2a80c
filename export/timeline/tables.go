package timeline

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/tracedx/tracedx/model"
)

// SchemaVersion is bumped whenever a column is renamed, removed or changes
// type. Adding a column at the end of a table does not bump it.
const SchemaVersion = "1"

// colKind says how a column's values are produced and stored.
type colKind uint8

const (
	kInt32  colKind = iota // int32, from i64 (null when !ok)
	kInt64                 // int64, from i64 (null when !ok)
	kFloat                 // float64, from f64
	kString                // dictionary<int32, utf8>, from sid (null for the empty string)
	kEnum                  // dictionary<int32, utf8> over a fixed list of names, from enum
)

// row is one event of one trace: the getters read t's table at index i.
type row struct {
	t    *model.Trace
	i    int
	rank int64
	off  int64 // set clock offset of t, added to every time
}

// column is one column of a table: its name, type, meaning and getter.
type column struct {
	name string
	kind colKind
	doc  string
	// opt marks an int column whose getter may report "no value" (null).
	opt bool
	// enumNames is the dictionary of a kEnum column; enum returns an index into it.
	enumNames []string
	i64       func(r row) (int64, bool)
	f64       func(r row) float64
	sid       func(r row) model.StringID
	enum      func(r row) int
}

// table is one output table: its columns and how to walk its rows.
type table struct {
	name string
	doc  string
	cols []column
	// n returns the number of rows of trace t.
	n func(t *model.Trace) int
	// span returns the row's time window (before the set offset), for window filtering.
	span func(t *model.Trace, i int) (start, end model.Time)
	// extra filters rows (nil: keep all); used by counters to skip unknown series.
	extra func(t *model.Trace, i int) bool
}

func (c *column) dataType() arrow.DataType {
	switch c.kind {
	case kInt32:
		return arrow.PrimitiveTypes.Int32
	case kInt64:
		return arrow.PrimitiveTypes.Int64
	case kFloat:
		return arrow.PrimitiveTypes.Float64
	default:
		return dictType
	}
}

var dictType = &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}

// typeName is the column type as docs/timeline.md shows it.
func (c *column) typeName() string {
	switch c.kind {
	case kInt32:
		return "int32"
	case kInt64:
		return "int64"
	case kFloat:
		return "float64"
	default:
		return "dictionary<int32, utf8>"
	}
}

// nullable reports whether the column can hold nulls.
func (c *column) nullable() bool { return c.opt || c.kind == kString }

// Shared column constructors.

func rankCol() column {
	return column{name: "rank", opt: true, kind: kInt32, doc: "rank of the trace in its job (null when unknown)",
		i64: func(r row) (int64, bool) { return r.rank, r.rank != model.NoRank }}
}

func deviceCol(get func(r row) model.DeviceID) column {
	return column{name: "device", opt: true, kind: kInt32, doc: "device ordinal as the capture reports it (null for host-side rows)",
		i64: func(r row) (int64, bool) { d := get(r); return int64(d), d != model.NoDevice }}
}

func streamCol(get func(r row) model.StreamID) column {
	return column{name: "stream", opt: true, kind: kInt64, doc: "GPU stream (queue) number (null when none)",
		i64: func(r row) (int64, bool) { s := get(r); return int64(s), s != model.NoStream }}
}

func pidCol(get func(r row) model.ThreadID) column {
	return column{name: "pid", opt: true, kind: kInt64, doc: "OS process id of the calling thread (null when none)",
		i64: func(r row) (int64, bool) {
			id := get(r)
			if id == model.NoThread {
				return 0, false
			}
			return r.t.Thread(id).PID, true
		}}
}

func tidCol(get func(r row) model.ThreadID) column {
	return column{name: "tid", opt: true, kind: kInt64, doc: "OS thread id (null when none)",
		i64: func(r row) (int64, bool) {
			id := get(r)
			if id == model.NoThread {
				return 0, false
			}
			return r.t.Thread(id).TID, true
		}}
}

func timeCols(get func(r row) (model.Time, model.Time)) []column {
	return []column{
		{name: "start_ns", kind: kInt64, doc: "start time, ns",
			i64: func(r row) (int64, bool) { s, _ := get(r); return int64(s) + r.off, true }},
		{name: "end_ns", kind: kInt64, doc: "end time, ns",
			i64: func(r row) (int64, bool) { _, e := get(r); return int64(e) + r.off, true }},
		{name: "dur_ns", kind: kInt64, doc: "end_ns - start_ns, ns",
			i64: func(r row) (int64, bool) { s, e := get(r); return int64(e - s), true }},
	}
}

func strCol(name, doc string, get func(r row) model.StringID) column {
	return column{name: name, kind: kString, doc: doc, sid: get}
}

func i64Col(name, doc string, get func(r row) int64) column {
	return column{name: name, kind: kInt64, doc: doc, i64: func(r row) (int64, bool) { return get(r), true }}
}

func i32Col(name, doc string, get func(r row) int32) column {
	return column{name: name, kind: kInt32, doc: doc, i64: func(r row) (int64, bool) { return int64(get(r)), true }}
}

// optI64Col is an int64 column whose value none (e.g. -1) becomes null.
func optI64Col(name, doc string, none int64, get func(r row) int64) column {
	return column{name: name, opt: true, kind: kInt64, doc: doc, i64: func(r row) (int64, bool) { v := get(r); return v, v != none }}
}

func enumCol(name, doc string, names []string, get func(r row) int) column {
	return column{name: name, kind: kEnum, doc: doc, enumNames: names, enum: get}
}

// enumNames lists the String() of every value 0..n-1 of an enum.
func enumNames[E interface {
	~uint8
	String() string
}](n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = E(i).String()
	}
	return out
}

// enumIndex clamps an enum value into its dictionary (out-of-range values,
// which Validate rejects, map to the last entry "invalid").
func enumIndex(v, n int) int {
	if v < 0 || v >= n {
		return n - 1
	}
	return v
}

var (
	memOpKinds  = append(enumNames[model.MemOpKind](int(model.MemSet)+1), "invalid")
	memKinds    = append(enumNames[model.MemKind](int(model.MemArray)+1), "invalid")
	apiClasses  = append(enumNames[model.APIClass](int(model.APIMemset)+1), "invalid")
	apiSources  = []string{"runtime", "driver", "accel"}
	rangeKinds  = append(enumNames[model.RangeKind](int(model.RangeMark)+1), "invalid")
	collOps     = append(enumNames[model.CollOp](int(model.CollScatter)+1), "invalid")
	collSources = []string{"kernel", "cpu", "invalid"}
	syncKinds   = append(enumNames[model.SyncKind](int(model.SyncStreamWait)+1), "invalid")
	gilStates   = []string{"waiting", "held", "invalid"}
)

// Table names, in the order files are written.
const (
	TableKernels     = "kernels"
	TableMemOps      = "memops"
	TableAPICalls    = "api_calls"
	TableRanges      = "ranges"
	TableCollectives = "collectives"
	TableCounters    = "counters"
	TableSyncs       = "syncs"
	TableOSCalls     = "os_calls"
	TableGIL         = "gil"
	TableMemory      = "memory"
)

// Tables lists every table name in write order.
func Tables() []string {
	out := make([]string, len(tables))
	for i, t := range tables {
		out[i] = t.name
	}
	return out
}

func kern(r row) *model.Kernel          { return &r.t.Kernels[r.i] }
func kcfg(r row) model.LaunchConfig     { return r.t.LaunchConfig(kern(r)) }
func memop(r row) *model.MemOp          { return &r.t.MemOps[r.i] }
func api(r row) *model.APICall          { return &r.t.APICalls[r.i] }
func apiID(r row) model.APIIdent        { return r.t.APIIdentOf(api(r)) }
func rng(r row) *model.Range            { return &r.t.Ranges[r.i] }
func rtrack(r row) model.RangeTrack     { return r.t.RangeTrack(rng(r)) }
func coll(r row) *model.Collective      { return &r.t.Collectives[r.i] }
func sample(r row) *model.CounterSample { return &r.t.Samples[r.i] }
func series(r row) *model.CounterSeries { return &r.t.Counters[r.t.Samples[r.i].Series] }

func syncEv(r row) *model.SyncEvent { return &r.t.Syncs[r.i] }
func oscall(r row) *model.OSCall    { return &r.t.OSCalls[r.i] }
func gil(r row) *model.GILInterval  { return &r.t.GIL[r.i] }
func memev(r row) *model.MemEvent   { return &r.t.MemEvents[r.i] }

func cat(groups ...[]column) []column {
	var out []column
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// tables is the schema of every table, defined once.
var tables = []*table{
	{
		name: TableKernels,
		doc:  "One row per GPU kernel execution.",
		n:    func(t *model.Trace) int { return len(t.Kernels) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.Kernels[i].Start, t.Kernels[i].End },
		cols: cat(
			[]column{rankCol(), deviceCol(func(r row) model.DeviceID { return kern(r).Device }),
				streamCol(func(r row) model.StreamID { return kcfg(r).Stream })},
			timeCols(func(r row) (model.Time, model.Time) { k := kern(r); return k.Start, k.End }),
			[]column{
				strCol("name", "kernel name (demangled where the capture has it)", func(r row) model.StringID { return kern(r).Name }),
				strCol("short_name", "short kernel name where the capture has one", func(r row) model.StringID { return kcfg(r).ShortName }),
				i64Col("correlation", "correlation id linking the kernel to its launch API call within corr_scope (0 = none)", func(r row) int64 { return kern(r).Correlation }),
				i32Col("corr_scope", "scope of correlation: the process id for Nsight Systems, 0 for Kineto", func(r row) int32 { return kern(r).CorrScope }),
				i64Col("external_id", "Kineto External id (0 = none)", func(r row) int64 { return kern(r).ExternalID }),
				i64Col("graph_id", "CUDA graph the kernel ran in (0 = none)", func(r row) int64 { return kcfg(r).GraphID }),
				i32Col("grid_x", "grid size x", func(r row) int32 { return kcfg(r).Grid[0] }),
				i32Col("grid_y", "grid size y", func(r row) int32 { return kcfg(r).Grid[1] }),
				i32Col("grid_z", "grid size z", func(r row) int32 { return kcfg(r).Grid[2] }),
				i32Col("block_x", "block size x", func(r row) int32 { return kcfg(r).Block[0] }),
				i32Col("block_y", "block size y", func(r row) int32 { return kcfg(r).Block[1] }),
				i32Col("block_z", "block size z", func(r row) int32 { return kcfg(r).Block[2] }),
				i32Col("registers", "registers per thread (0 = unknown)", func(r row) int32 { return kcfg(r).Registers }),
				i32Col("shared_mem", "static + dynamic shared memory bytes (0 = unknown)", func(r row) int32 { return kcfg(r).SharedMem }),
			}),
	},
	{
		name: TableMemOps,
		doc:  "One row per GPU memory copy or memset.",
		n:    func(t *model.Trace) int { return len(t.MemOps) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.MemOps[i].Start, t.MemOps[i].End },
		cols: cat(
			[]column{rankCol(), deviceCol(func(r row) model.DeviceID { return memop(r).Device }),
				streamCol(func(r row) model.StreamID { return memop(r).Stream })},
			timeCols(func(r row) (model.Time, model.Time) { m := memop(r); return m.Start, m.End }),
			[]column{
				strCol("name", "the capture's own name, e.g. \"Memcpy HtoD (Pageable -> Device)\"", func(r row) model.StringID { return memop(r).Name }),
				enumCol("kind", "HtoD, DtoH, DtoD, HtoH, PtoP, UVM, Memset or unknown", memOpKinds, func(r row) int { return enumIndex(int(memop(r).Kind), len(memOpKinds)) }),
				enumCol("src_kind", "source memory kind: pageable, pinned, device, managed, array or unknown", memKinds, func(r row) int { return enumIndex(int(memop(r).Src), len(memKinds)) }),
				enumCol("dst_kind", "destination memory kind", memKinds, func(r row) int { return enumIndex(int(memop(r).Dst), len(memKinds)) }),
				optI64Col("bytes", "bytes copied or set (null when unknown)", -1, func(r row) int64 { return memop(r).Bytes }),
				i64Col("correlation", "correlation id linking the operation to its API call (0 = none)", func(r row) int64 { return memop(r).Correlation }),
				i32Col("corr_scope", "scope of correlation (process id for Nsight Systems, 0 for Kineto)", func(r row) int32 { return memop(r).CorrScope }),
				i64Col("external_id", "Kineto External id (0 = none)", func(r row) int64 { return memop(r).ExternalID }),
			}),
	},
	{
		name: TableAPICalls,
		doc:  "One row per host-side runtime or driver API call.",
		n:    func(t *model.Trace) int { return len(t.APICalls) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.APICalls[i].Start, t.APICalls[i].End },
		cols: cat(
			[]column{rankCol(), pidCol(func(r row) model.ThreadID { return api(r).Thread }),
				tidCol(func(r row) model.ThreadID { return api(r).Thread })},
			timeCols(func(r row) (model.Time, model.Time) { a := api(r); return a.Start, a.End }),
			[]column{
				strCol("name", "API function name, e.g. cudaLaunchKernel", func(r row) model.StringID { return apiID(r).Name }),
				enumCol("class", "launch, sync, memcpy, alloc, graph-launch, memset or other", apiClasses, func(r row) int { return enumIndex(int(apiID(r).Class), len(apiClasses)) }),
				enumCol("source", "runtime, driver or accel", apiSources, func(r row) int { return enumIndex(int(apiID(r).Source), len(apiSources)) }),
				i64Col("correlation", "correlation id linking the call to the GPU work it issued (0 = none)", func(r row) int64 { return api(r).Correlation }),
				i32Col("corr_scope", "scope of correlation (process id for Nsight Systems, 0 for Kineto)", func(r row) int32 { return apiID(r).Scope }),
				i64Col("external_id", "Kineto External id (0 = none)", func(r row) int64 { return api(r).ExternalID }),
			}),
	},
	{
		name: TableRanges,
		doc:  "One row per annotated range: user annotations, ProfilerStep, CPU operators, Python frames, NVTX, GPU annotations and marks.",
		n:    func(t *model.Trace) int { return len(t.Ranges) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.Ranges[i].Start, t.Ranges[i].End },
		cols: cat(
			[]column{rankCol(), pidCol(func(r row) model.ThreadID { return rng(r).Thread }),
				tidCol(func(r row) model.ThreadID { return rng(r).Thread }),
				deviceCol(func(r row) model.DeviceID { return rtrack(r).Device }),
				streamCol(func(r row) model.StreamID { return rtrack(r).Stream })},
			timeCols(func(r row) (model.Time, model.Time) { g := rng(r); return g.Start, g.End }),
			[]column{
				strCol("name", "range name", func(r row) model.StringID { return rng(r).Name }),
				enumCol("kind", "user, step, cpu-op, python, nvtx, gpu-annotation or mark", rangeKinds, func(r row) int { return enumIndex(int(rng(r).Kind), len(rangeKinds)) }),
				strCol("domain", "NVTX domain (null for the default domain)", func(r row) model.StringID { return rtrack(r).Domain }),
				i32Col("depth", "nesting depth within its lane, 0 = outermost", func(r row) int32 { return int32(rng(r).Depth) }),
				i64Col("external_id", "Kineto External id (0 = none)", func(r row) int64 { return rng(r).ExternalID }),
			}),
	},
	{
		name: TableCollectives,
		doc:  "One row per collective communication operation (from a communication kernel or a host-side record).",
		n:    func(t *model.Trace) int { return len(t.Collectives) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) {
			return t.Collectives[i].Start, t.Collectives[i].End
		},
		cols: cat(
			[]column{rankCol(), deviceCol(func(r row) model.DeviceID { return coll(r).Device }),
				streamCol(func(r row) model.StreamID { return coll(r).Stream })},
			timeCols(func(r row) (model.Time, model.Time) { c := coll(r); return c.Start, c.End }),
			[]column{
				enumCol("op", "all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv, send, recv, barrier, gather, scatter or unknown", collOps, func(r row) int { return enumIndex(int(coll(r).Op), len(collOps)) }),
				enumCol("source", "kernel (a GPU communication kernel) or cpu (a host-side record)", collSources, func(r row) int { return enumIndex(int(coll(r).Source), len(collSources)) }),
				optI64Col("bytes", "message size in bytes (null when unknown)", -1, func(r row) int64 { return coll(r).Bytes }),
				strCol("dtype", "element type (null when unknown)", func(r row) model.StringID { return coll(r).Dtype }),
				strCol("group", "process group name or id (null when unknown)", func(r row) model.StringID { return coll(r).Group }),
				column{name: "group_size", opt: true, kind: kInt32, doc: "process group size (null when unknown)",
					i64: func(r row) (int64, bool) { g := coll(r).GroupSize; return int64(g), g > 0 }},
				column{name: "group_rank", opt: true, kind: kInt32, doc: "rank within the process group as the record says (null when unknown)",
					i64: func(r row) (int64, bool) { g := coll(r).Rank; return int64(g), g != model.NoRank }},
				optI64Col("seq", "sequence number within the process group (null when unknown)", -1, func(r row) int64 { return coll(r).Seq }),
				i64Col("correlation", "correlation id of the communication kernel (0 = none)", func(r row) int64 { return coll(r).Correlation }),
				i64Col("external_id", "Kineto External id (0 = none)", func(r row) int64 { return coll(r).ExternalID }),
			}),
	},
	{
		name: TableCounters,
		doc:  "One row per counter sample, joined with its series (name, unit, device).",
		n:    func(t *model.Trace) int { return len(t.Samples) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.Samples[i].Time, t.Samples[i].Time },
		extra: func(t *model.Trace, i int) bool {
			s := t.Samples[i].Series
			return s >= 0 && int(s) < len(t.Counters)
		},
		cols: []column{
			rankCol(),
			deviceCol(func(r row) model.DeviceID { return series(r).Device }),
			{name: "time_ns", kind: kInt64, doc: "sample time, ns",
				i64: func(r row) (int64, bool) { return int64(sample(r).Time) + r.off, true }},
			strCol("name", "series name, e.g. \"SM Active\"", func(r row) model.StringID { return series(r).Name }),
			strCol("unit", "series unit (null when unknown)", func(r row) model.StringID { return series(r).Unit }),
			{name: "value", kind: kFloat, doc: "sample value", f64: func(r row) float64 { return sample(r).Value }},
		},
	},
	{
		name: TableSyncs,
		doc:  "One row per GPU-side synchronisation record (CUPTI synchronization activity, Kineto cuda_sync).",
		n:    func(t *model.Trace) int { return len(t.Syncs) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.Syncs[i].Start, t.Syncs[i].End },
		cols: cat(
			[]column{rankCol(), deviceCol(func(r row) model.DeviceID { return syncEv(r).Device }),
				streamCol(func(r row) model.StreamID { return syncEv(r).Stream })},
			timeCols(func(r row) (model.Time, model.Time) { e := syncEv(r); return e.Start, e.End }),
			[]column{
				enumCol("kind", "stream, event, context, stream-wait or unknown", syncKinds, func(r row) int { return enumIndex(int(syncEv(r).Kind), len(syncKinds)) }),
				i64Col("correlation", "correlation id of the API call that synchronised (0 = none)", func(r row) int64 { return syncEv(r).Correlation }),
				i32Col("corr_scope", "scope of correlation (process id for Nsight Systems, 0 for Kineto)", func(r row) int32 { return syncEv(r).CorrScope }),
			}),
	},
	{
		name: TableOSCalls,
		doc:  "One row per OS runtime call (Nsight Systems OS runtime trace).",
		n:    func(t *model.Trace) int { return len(t.OSCalls) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.OSCalls[i].Start, t.OSCalls[i].End },
		cols: cat(
			[]column{rankCol(), pidCol(func(r row) model.ThreadID { return oscall(r).Thread }),
				tidCol(func(r row) model.ThreadID { return oscall(r).Thread })},
			timeCols(func(r row) (model.Time, model.Time) { o := oscall(r); return o.Start, o.End }),
			[]column{
				strCol("name", "OS function name, e.g. pthread_cond_timedwait", func(r row) model.StringID { return oscall(r).Name }),
			}),
	},
	{
		name: TableGIL,
		doc:  "One row per span in which a Python thread waited for or held the GIL.",
		n:    func(t *model.Trace) int { return len(t.GIL) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.GIL[i].Start, t.GIL[i].End },
		cols: cat(
			[]column{rankCol(), pidCol(func(r row) model.ThreadID { return gil(r).Thread }),
				tidCol(func(r row) model.ThreadID { return gil(r).Thread })},
			timeCols(func(r row) (model.Time, model.Time) { g := gil(r); return g.Start, g.End }),
			[]column{
				enumCol("state", "waiting or held", gilStates, func(r row) int { return enumIndex(int(gil(r).State), len(gilStates)) }),
			}),
	},
	{
		name: TableMemory,
		doc:  "One row per allocator event: an allocation (bytes > 0) or a free (bytes < 0).",
		n:    func(t *model.Trace) int { return len(t.MemEvents) },
		span: func(t *model.Trace, i int) (model.Time, model.Time) { return t.MemEvents[i].Time, t.MemEvents[i].Time },
		cols: []column{
			rankCol(),
			deviceCol(func(r row) model.DeviceID { return memev(r).Device }),
			pidCol(func(r row) model.ThreadID { return memev(r).Thread }),
			tidCol(func(r row) model.ThreadID { return memev(r).Thread }),
			{name: "time_ns", kind: kInt64, doc: "event time, ns",
				i64: func(r row) (int64, bool) { return int64(memev(r).Time) + r.off, true }},
			i64Col("bytes", "bytes allocated (> 0) or freed (< 0)", func(r row) int64 { return memev(r).Bytes }),
			i64Col("addr", "address (as a signed 64-bit integer)", func(r row) int64 { return int64(memev(r).Addr) }),
			optI64Col("total_allocated", "allocator's allocated total after the event (null when unknown)", -1, func(r row) int64 { return memev(r).TotalAllocated }),
			optI64Col("total_reserved", "allocator's reserved total after the event (null when unknown)", -1, func(r row) int64 { return memev(r).TotalReserved }),
		},
	},
}

func tableByName(name string) *table {
	for _, t := range tables {
		if t.name == name {
			return t
		}
	}
	return nil
}

// Schema returns the Arrow schema of the named table (nil for an unknown name).
func Schema(name string) *arrow.Schema {
	t := tableByName(name)
	if t == nil {
		return nil
	}
	return t.schema()
}

func (t *table) schema() *arrow.Schema {
	fields := make([]arrow.Field, len(t.cols))
	for i := range t.cols {
		c := &t.cols[i]
		fields[i] = arrow.Field{Name: c.name, Type: c.dataType(), Nullable: c.nullable()}
	}
	md := arrow.NewMetadata([]string{"tracedx.table", "tracedx.schema_version"}, []string{t.name, SchemaVersion})
	return arrow.NewSchema(fields, &md)
}
