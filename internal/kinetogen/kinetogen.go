package kinetogen

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"

	"github.com/tracedx/tracedx/internal/tracejson"
	"github.com/tracedx/tracedx/model"
)

// TSEncoding is how ts and dur values are written.
type TSEncoding int

// Timestamp encodings seen in real traces.
const (
	IntMicros    TSEncoding = iota // integer epoch µs (2020–2023 builds); sub-µs parts are truncated
	FloatEpochNs                   // float epoch µs with 3 decimals (2024-04)
	RelativeBase                   // baseTimeNanoseconds + relative float µs (mid-2024+)
)

// Layout selects the shape of the written file.
type Layout struct {
	BareArray   bool // top level is the event array itself (2020-12)
	HeaderAfter bool // header keys follow traceEvents
	TS          TSEncoding
	// Legacy writes 2020–21 names: Operator/Runtime/Kernel/Memcpy/Memset,
	// string tids ("stream 7", decimal CPU tids), flows cat "async" name
	// "launch", lowercase "external id", [memory] without cat, pid "Traces".
	Legacy     bool
	Gzip       bool
	NoMetadata bool // write no ph "M" events
	// DupMeta writes every metadata event this many extra times.
	DupMeta int
	// Unsorted writes each block of events in reverse order.
	Unsorted bool
}

// quarter is Kineto's base-time rounding (ChromeTraceBaseTime): 7,889,238 s.
const quarter = 7889238 * int64(1e9)

// WriteFile writes t to path (gzip when l.Gzip).
func WriteFile(path string, t *model.Trace, l Layout) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, t, l); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Write writes t as Kineto JSON to w: deviceProperties from t.Devices,
// distributedInfo when t.Rank >= 0, CPU ranges, [memory] instants, python
// frames, API calls with ac2g flows to the GPU ops sharing their
// correlation, kernels (NCCL ones with the collective args of the
// matching kernel Collective), copies, sets, cuda_sync records, GPU
// annotations, process/thread metadata and, when t.Capture is set, the
// profiler span. A CPU-side Collective annotates the record_param_comms
// range with the same start and end, or becomes one on the first thread.
// Devices with Kind DeviceAccel get mtia_ccp_events / mtia_runtime records.
func Write(w io.Writer, t *model.Trace, l Layout) error {
	var zw *gzip.Writer
	if l.Gzip {
		zw = gzip.NewWriter(w)
		w = zw
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	g := &gen{t: t, l: l, w: bw}
	g.run()
	if err := bw.Flush(); err != nil {
		return err
	}
	if zw != nil {
		return zw.Close()
	}
	return nil
}

type gen struct {
	t     *model.Trace
	l     Layout
	w     *bufio.Writer
	base  int64
	first bool
}

// obj is a JSON object under construction: raw "key":value pairs.
type obj struct{ b []byte }

func (o *obj) key(k string) {
	if len(o.b) > 0 {
		o.b = append(o.b, ", "...)
	}
	o.b = tracejson.AppendString(o.b, k)
	o.b = append(o.b, ": "...)
}
func (o *obj) str(k, v string)       { o.key(k); o.b = tracejson.AppendString(o.b, v) }
func (o *obj) int(k string, v int64) { o.key(k); o.b = strconv.AppendInt(o.b, v, 10) }
func (o *obj) raw(k, v string)       { o.key(k); o.b = append(o.b, v...) }
func (o *obj) bytes() []byte         { return append(append([]byte{'{'}, o.b...), '}') }

// appendMicros writes ns as µs with 3 decimals (or as an integer when ints).
func appendMicros(b []byte, ns int64, ints bool) []byte {
	if ints {
		return tracejson.AppendWholeMicros(b, ns)
	}
	return tracejson.AppendMicros(b, ns)
}

func (g *gen) ts(o *obj, ns model.Time) {
	o.key("ts")
	o.b = appendMicros(o.b, int64(ns)-g.base, g.l.TS == IntMicros)
}

func (g *gen) dur(o *obj, start, end model.Time) {
	o.key("dur")
	d := int64(end - start)
	if g.l.TS == IntMicros {
		d = (int64(end)/1000 - int64(start)/1000) * 1000
	}
	o.b = appendMicros(o.b, d, g.l.TS == IntMicros)
}

// event starts an event object with ph, cat (omitted when ""), name.
func (g *gen) event(ph, cat, name string) *obj {
	o := &obj{}
	o.str("ph", ph)
	if cat != "" {
		o.str("cat", cat)
	}
	o.str("name", name)
	return o
}

// cpuLane writes pid/tid of a CPU thread; flowStart keeps an int tid in
// legacy files, as Kineto did.
func (g *gen) cpuLane(o *obj, th model.ThreadID, flowStart bool) {
	x := g.t.Thread(th)
	if th == model.NoThread {
		x = model.Thread{}
	}
	o.int("pid", x.PID)
	if g.l.Legacy && !flowStart {
		o.str("tid", strconv.FormatInt(x.TID, 10))
	} else {
		o.int("tid", x.TID)
	}
}

func (g *gen) gpuLane(o *obj, dev model.DeviceID, stream model.StreamID, flowEnd bool) {
	o.int("pid", int64(dev))
	if g.l.Legacy && !flowEnd {
		o.str("tid", "stream "+strconv.FormatInt(int64(stream), 10))
	} else {
		o.int("tid", int64(stream))
	}
}

func (g *gen) extKey() string {
	if g.l.Legacy {
		return "external id"
	}
	return "External id"
}

func (g *gen) vendor(dev model.DeviceID) (string, model.DeviceKind) {
	if d, ok := g.t.Device(dev); ok {
		return d.Vendor, d.Kind
	}
	return "", model.DeviceGPU
}

func (g *gen) isAMD(dev model.DeviceID) bool {
	v, _ := g.vendor(dev)
	return v == "AMD"
}

var memKindTitle = map[model.MemKind]string{model.MemPageable: "Pageable", model.MemPinned: "Pinned",
	model.MemDevice: "Device", model.MemManaged: "Managed", model.MemArray: "Array"}

func memKindName(k model.MemKind) string {
	if s, ok := memKindTitle[k]; ok {
		return s
	}
	return "Unknown"
}

// MemOpName returns the Kineto name of a copy or set, e.g.
// "Memcpy HtoD (Pageable -> Device)" or "Memset (Device)".
func MemOpName(m *model.MemOp) string {
	if m.Kind == model.MemSet {
		return "Memset (" + memKindName(m.Dst) + ")"
	}
	return "Memcpy " + m.Kind.String() + " (" + memKindName(m.Src) + " -> " + memKindName(m.Dst) + ")"
}

var syncNames = map[model.SyncKind][2]string{
	model.SyncStream:     {"Stream Sync", "stream_synchronize"},
	model.SyncOnEvent:    {"Event Sync", "event_synchronize"},
	model.SyncContext:    {"Context Sync", "context_synchronize"},
	model.SyncStreamWait: {"Stream Wait Event", "stream_wait_event"},
	model.SyncUnknown:    {"Unknown Sync", "unknown"},
}

func (g *gen) run() {
	t := g.t
	g.first = true
	if g.l.TS == RelativeBase {
		min := int64(0)
		have := false
		see := func(x model.Time) {
			if !have || int64(x) < min {
				min, have = int64(x), true
			}
		}
		for i := range t.Kernels {
			see(t.Kernels[i].Start)
		}
		for i := range t.APICalls {
			see(t.APICalls[i].Start)
		}
		for i := range t.Ranges {
			see(t.Ranges[i].Start)
		}
		for i := range t.MemOps {
			see(t.MemOps[i].Start)
		}
		for i := range t.MemEvents {
			see(t.MemEvents[i].Time)
		}
		if t.Capture.Start != 0 {
			see(t.Capture.Start)
		}
		if min > 0 {
			g.base = min / quarter * quarter
		}
	}
	if g.l.BareArray {
		g.w.WriteString("[\n")
		g.events()
		g.w.WriteString("\n]\n")
		return
	}
	g.w.WriteString("{\n")
	if !g.l.HeaderAfter {
		g.header()
	}
	g.w.WriteString("  \"traceEvents\": [\n")
	g.events()
	g.w.WriteString("\n  ]")
	if g.l.HeaderAfter {
		g.header()
	}
	g.w.WriteString("\n}\n")
}

// header writes the top-level keys other than traceEvents; each line ends
// with ",\n" before traceEvents and starts with ",\n" after it.
func (g *gen) header() {
	t := g.t
	var keys [][2]string
	add := func(k, v string) { keys = append(keys, [2]string{k, v}) }
	add("schemaVersion", "1")
	var devs []string
	for _, d := range t.Devices {
		o := &obj{}
		o.int("id", int64(d.ID))
		o.str("name", d.Name)
		if d.Kind == model.DeviceAccel {
			o.int("runtimeMajorVersion", 1)
		} else {
			o.int("totalGlobalMem", d.MemoryBytes)
			o.int("computeMajor", int64(d.ComputeMajor))
			o.int("computeMinor", int64(d.ComputeMinor))
			o.int("numSms", int64(d.SMs))
		}
		devs = append(devs, string(o.bytes()))
	}
	add("deviceProperties", "["+strings.Join(devs, ", ")+"]")
	if t.Rank >= 0 {
		o := &obj{}
		backend := t.Meta["backend"]
		if backend == "" {
			backend = "nccl"
		}
		o.str("backend", backend)
		o.int("rank", int64(t.Rank))
		if t.WorldSize > 0 {
			o.int("world_size", int64(t.WorldSize))
		}
		if v := t.Meta["nccl_version"]; v != "" {
			o.str("nccl_version", v)
		}
		add("distributedInfo", string(o.bytes()))
	}
	for _, k := range []string{"cupti_version", "cuda_runtime_version", "cuda_driver_version", "hip_runtime_version", "hip_driver_version"} {
		if v, ok := t.Meta[k]; ok {
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				add(k, v)
			}
		}
	}
	add("traceName", string(tracejson.AppendString(nil, "libkineto_activities_1.json")))
	add("displayTimeUnit", `"ms"`)
	if g.l.TS == RelativeBase {
		add("baseTimeNanoseconds", strconv.FormatInt(g.base, 10))
	}
	for _, kv := range keys {
		if g.l.HeaderAfter {
			g.w.WriteString(",\n  ")
		} else {
			g.w.WriteString("  ")
		}
		g.w.Write(tracejson.AppendString(nil, kv[0]))
		g.w.WriteString(": ")
		g.w.WriteString(kv[1])
		if !g.l.HeaderAfter {
			g.w.WriteString(",\n")
		}
	}
}

func (g *gen) emit(block [][]byte) {
	if g.l.Unsorted {
		for i, j := 0, len(block)-1; i < j; i, j = i+1, j-1 {
			block[i], block[j] = block[j], block[i]
		}
	}
	for _, e := range block {
		if !g.first {
			g.w.WriteString(",\n")
		}
		g.first = false
		g.w.WriteString("  ")
		g.w.Write(e)
	}
}

// collArgs adds the collective keys of section 8 (2024+ builds).
func collArgs(t *model.Trace, a *obj, c *model.Collective) {
	name := c.Op.String()
	name = strings.ReplaceAll(name, "_", "")
	a.str("Collective name", name)
	dtype := t.Str(c.Dtype)
	if c.Bytes >= 0 {
		size := DtypeSize(dtype)
		if dtype == "" || size <= 0 {
			dtype, size = "Byte", 1
		}
		a.int("In msg nelems", c.Bytes/size)
		a.int("Out msg nelems", c.Bytes/size)
	}
	if dtype != "" {
		a.str("dtype", dtype)
	}
	a.str("In split size", "[]")
	a.str("Out split size", "[]")
	if c.GroupSize > 0 {
		a.int("Group size", int64(c.GroupSize))
	}
	if c.Group != model.NoString {
		a.str("Process Group Name", t.Str(c.Group))
		a.str("Process Group Description", "default_pg")
	}
	if c.Rank >= 0 {
		a.int("Rank", int64(c.Rank))
	}
	if c.Seq >= 0 {
		a.int("Seq", c.Seq)
	}
}

// DtypeSize is the element size of a PyTorch dtype name as Kineto writes it
// ("Float", "BFloat16", ...), or 0 when unknown.
func DtypeSize(s string) int64 {
	switch strings.ToLower(s) {
	case "byte", "char", "bool", "uint8", "int8", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz":
		return 1
	case "short", "half", "bfloat16", "int16", "uint16", "float16":
		return 2
	case "int", "float", "int32", "uint32", "float32", "complexhalf":
		return 4
	case "long", "double", "int64", "uint64", "float64", "complexfloat":
		return 8
	case "complexdouble":
		return 16
	}
	return 0
}

func (g *gen) events() {
	t := g.t
	ext := g.extKey()
	legacy := g.l.Legacy

	// CPU collectives attach to a record_param_comms range at the same time,
	// or become one on the first thread.
	cpuColl := map[[2]model.Time]*model.Collective{}
	var extraColl []*model.Collective
	rpc := map[[2]model.Time]bool{}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if t.Str(r.Name) == "record_param_comms" {
			rpc[[2]model.Time{r.Start, r.End}] = true
		}
	}
	kernColl := map[[4]int64]*model.Collective{}
	for i := range t.Collectives {
		c := &t.Collectives[i]
		if c.Source == model.CollFromCPU {
			k := [2]model.Time{c.Start, c.End}
			if rpc[k] {
				cpuColl[k] = c
			} else {
				extraColl = append(extraColl, c)
			}
		} else {
			kernColl[[4]int64{int64(c.Device), int64(c.Stream), int64(c.Start), int64(c.End)}] = c
		}
	}

	// Block 1: CPU ops and user annotations.
	var block [][]byte
	rangeEvent := func(r *model.Range) []byte {
		name := t.Str(r.Name)
		var cat string
		switch r.Kind {
		case model.RangeCPUOp:
			cat = "cpu_op"
		case model.RangePython:
			cat = "python_function"
		case model.RangeGPUAnnotation:
			cat = "gpu_user_annotation"
		default:
			cat = "user_annotation"
		}
		if legacy && (r.Kind == model.RangeCPUOp || r.Kind == model.RangeUser || r.Kind == model.RangeStep) {
			cat = "Operator"
		}
		o := g.event("X", cat, name)
		if r.Kind == model.RangeGPUAnnotation {
			g.gpuLane(o, r.Device, r.Stream, false)
		} else {
			g.cpuLane(o, r.Thread, false)
		}
		g.ts(o, r.Start)
		g.dur(o, r.Start, r.End)
		a := &obj{}
		if r.ExternalID != 0 {
			a.int(ext, r.ExternalID)
		}
		if r.Kind == model.RangeGPUAnnotation {
			a.int("device", int64(r.Device))
			a.int("stream", int64(r.Stream))
		}
		if c := cpuColl[[2]model.Time{r.Start, r.End}]; c != nil && name == "record_param_comms" {
			collArgs(t, a, c)
		}
		if r.Kind == model.RangePython {
			a.raw("Python parent id", "null")
		}
		o.raw("args", string(a.bytes()))
		return o.bytes()
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind != model.RangePython && r.Kind != model.RangeGPUAnnotation {
			block = append(block, rangeEvent(r))
		}
	}
	for _, c := range extraColl {
		o := g.event("X", "cpu_op", "record_param_comms")
		th := model.NoThread
		if len(t.Threads) > 0 {
			th = 0
		}
		g.cpuLane(o, th, false)
		g.ts(o, c.Start)
		g.dur(o, c.Start, c.End)
		a := &obj{}
		if c.ExternalID != 0 {
			a.int(ext, c.ExternalID)
		}
		collArgs(t, a, c)
		o.raw("args", string(a.bytes()))
		block = append(block, o.bytes())
	}
	g.emit(block)

	// Block 2: memory instants.
	block = nil
	for i := range t.MemEvents {
		m := &t.MemEvents[i]
		cat := "cpu_instant_event"
		if legacy {
			cat = ""
		}
		o := g.event("i", cat, "[memory]")
		g.cpuLane(o, m.Thread, false)
		g.ts(o, m.Time)
		o.str("s", "t")
		a := &obj{}
		devType, devID := int64(0), int64(-1)
		if m.Device != model.NoDevice {
			devType, devID = 1, int64(m.Device)
			if g.isAMD(m.Device) {
				devType = 6
			}
		}
		a.int("Device Type", devType)
		a.int("Device Id", devID)
		if !legacy {
			a.int("Addr", int64(m.Addr))
		}
		a.int("Bytes", m.Bytes)
		if !legacy {
			if m.TotalAllocated >= 0 {
				a.int("Total Allocated", m.TotalAllocated)
			}
			if m.TotalReserved >= 0 {
				a.int("Total Reserved", m.TotalReserved)
			}
		}
		o.raw("args", string(a.bytes()))
		block = append(block, o.bytes())
	}
	g.emit(block)

	// Block 3: python frames.
	block = nil
	for i := range t.Ranges {
		if t.Ranges[i].Kind == model.RangePython {
			block = append(block, rangeEvent(&t.Ranges[i]))
		}
	}
	g.emit(block)

	// Block 4: runtime calls, GPU activity and flows.
	block = nil
	gpuCorr := map[int64]bool{}
	for i := range t.Kernels {
		gpuCorr[t.Kernels[i].Correlation] = true
	}
	for i := range t.MemOps {
		gpuCorr[t.MemOps[i].Correlation] = true
	}
	flowCat, flowName := "ac2g", "ac2g"
	if legacy {
		flowCat, flowName = "async", "launch"
	}
	for i := range t.APICalls {
		a := &t.APICalls[i]
		name := t.Str(a.Name)
		cat := "cuda_runtime"
		switch {
		case a.Source == model.APIAccel:
			cat = "mtia_runtime"
		case a.Source == model.APIDriver:
			cat = "cuda_driver"
		case legacy:
			cat = "Runtime"
		}
		o := g.event("X", cat, name)
		g.cpuLane(o, a.Thread, false)
		g.ts(o, a.Start)
		g.dur(o, a.Start, a.End)
		args := &obj{}
		hip := strings.HasPrefix(name, "hip")
		if a.Correlation != 0 {
			args.int("correlation", a.Correlation)
		}
		if a.ExternalID != 0 {
			args.int(ext, a.ExternalID)
		}
		if hip {
			args.str("stream", "0x0")
			if a.Class == model.APIMemcpy {
				args.str("size", "4096")
				args.str("kind", "1")
			}
		}
		o.raw("args", string(args.bytes()))
		block = append(block, o.bytes())
		if a.Correlation != 0 && gpuCorr[a.Correlation] {
			f := g.event("s", flowCat, flowName)
			f.int("id", a.Correlation)
			g.cpuLane(f, a.Thread, true)
			g.ts(f, a.Start)
			block = append(block, f.bytes())
		}
	}
	flowEnd := func(dev model.DeviceID, stream model.StreamID, start model.Time, corr int64) {
		if corr == 0 {
			return
		}
		f := g.event("f", flowCat, flowName)
		f.int("id", corr)
		g.gpuLane(f, dev, stream, true)
		g.ts(f, start)
		f.str("bp", "e")
		block = append(block, f.bytes())
	}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		_, kind := g.vendor(k.Device)
		amd := g.isAMD(k.Device)
		cat := "kernel"
		if kind == model.DeviceAccel {
			cat = "mtia_ccp_events"
		} else if legacy {
			cat = "Kernel"
		}
		o := g.event("X", cat, t.Str(k.Name))
		g.gpuLane(o, k.Device, k.Stream, false)
		g.ts(o, k.Start)
		g.dur(o, k.Start, k.End)
		a := &obj{}
		if kind == model.DeviceAccel {
			a.int("stream_id", int64(k.Stream))
		}
		a.int("device", int64(k.Device))
		a.int("stream", int64(k.Stream))
		if k.Correlation != 0 {
			a.int("correlation", k.Correlation)
		}
		if k.ExternalID != 0 {
			a.int(ext, k.ExternalID)
		}
		if amd {
			a.str("kind", "Dispatch Kernel")
		} else if kind != model.DeviceAccel {
			if k.Registers != 0 {
				a.int("registers per thread", int64(k.Registers))
			}
			if k.SharedMem != 0 {
				a.int("shared memory", int64(k.SharedMem))
			}
		}
		if k.GraphID != 0 {
			a.int("graph id", k.GraphID)
		}
		if k.Grid != [3]int32{} || k.Block != [3]int32{} {
			a.raw("grid", fmt.Sprintf("[%d, %d, %d]", k.Grid[0], k.Grid[1], k.Grid[2]))
			a.raw("block", fmt.Sprintf("[%d, %d, %d]", k.Block[0], k.Block[1], k.Block[2]))
		}
		if c := kernColl[[4]int64{int64(k.Device), int64(k.Stream), int64(k.Start), int64(k.End)}]; c != nil {
			collArgs(t, a, c)
		}
		o.raw("args", string(a.bytes()))
		block = append(block, o.bytes())
		flowEnd(k.Device, k.Stream, k.Start, k.Correlation)
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		amd := g.isAMD(m.Device)
		cat := "gpu_memcpy"
		if m.Kind == model.MemSet {
			cat = "gpu_memset"
		}
		if legacy {
			cat = "Memcpy"
			if m.Kind == model.MemSet {
				cat = "Memset"
			}
		}
		o := g.event("X", cat, MemOpName(m))
		g.gpuLane(o, m.Device, m.Stream, false)
		g.ts(o, m.Start)
		g.dur(o, m.Start, m.End)
		a := &obj{}
		a.int("device", int64(m.Device))
		a.int("stream", int64(m.Stream))
		if m.Correlation != 0 {
			a.int("correlation", m.Correlation)
		}
		if m.ExternalID != 0 {
			a.int(ext, m.ExternalID)
		}
		if m.Bytes >= 0 {
			if amd {
				a.str("bytes", strconv.FormatInt(m.Bytes, 10))
			} else {
				a.int("bytes", m.Bytes)
			}
		}
		if amd {
			a.str("kind", m.Kind.String())
		}
		o.raw("args", string(a.bytes()))
		block = append(block, o.bytes())
		flowEnd(m.Device, m.Stream, m.Start, m.Correlation)
	}
	for i := range t.Syncs {
		s := &t.Syncs[i]
		names := syncNames[s.Kind]
		o := g.event("X", "cuda_sync", names[0])
		g.gpuLane(o, s.Device, s.Stream, true)
		g.ts(o, s.Start)
		g.dur(o, s.Start, s.End)
		a := &obj{}
		a.str("cuda_sync_kind", names[1])
		a.int("device", int64(s.Device))
		st := int64(s.Stream)
		if st < 0 {
			st = 4294967295
		}
		a.int("stream", st)
		if s.Correlation != 0 {
			a.int("correlation", s.Correlation)
		}
		o.raw("args", string(a.bytes()))
		block = append(block, o.bytes())
	}
	for i := range t.Ranges {
		if t.Ranges[i].Kind == model.RangeGPUAnnotation {
			block = append(block, rangeEvent(&t.Ranges[i]))
		}
	}
	g.emit(block)

	// Block 5: metadata.
	if !g.l.NoMetadata {
		block = g.metadata()
		n := len(block)
		for r := 0; r < g.l.DupMeta; r++ {
			block = append(block, block[:n]...)
		}
		g.emit(block)
	}

	// Block 6: the capture span.
	block = nil
	if t.Capture != (model.Interval{}) {
		spans := "Spans"
		if legacy {
			spans = "Traces"
		}
		o := g.event("X", "Trace", "PyTorch Profiler (0)")
		o.str("pid", spans)
		o.str("tid", "PyTorch Profiler")
		g.ts(o, t.Capture.Start)
		g.dur(o, t.Capture.Start, t.Capture.End)
		o.raw("args", `{"Op count": 0}`)
		block = append(block, o.bytes())
		o = g.event("i", "", "Record Window End")
		o.str("pid", "")
		o.str("tid", "")
		g.ts(o, t.Capture.End)
		o.str("s", "g")
		block = append(block, o.bytes())
	}
	g.emit(block)
}

func (g *gen) metadata() [][]byte {
	t := g.t
	var out [][]byte
	meta := func(name string, pid, tid string, ts model.Time, args string) {
		o := g.event("M", "", name)
		o.raw("pid", pid)
		o.raw("tid", tid)
		g.ts(o, ts)
		o.raw("args", args)
		out = append(out, o.bytes())
	}
	var t0 model.Time
	if t.Capture.Start != 0 {
		t0 = t.Capture.Start
	}
	procName := "python3"
	for _, p := range t.Processes {
		pid := strconv.FormatInt(p.PID, 10)
		meta("process_name", pid, "0", t0, `{"name": `+string(tracejson.AppendString(nil, p.Name))+`}`)
		meta("process_labels", pid, "0", t0, `{"labels": "CPU"}`)
		meta("process_sort_index", pid, "0", t0, `{"sort_index": `+pid+`}`)
		if procName == "python3" && p.Name != "" {
			procName = p.Name
		}
	}
	streams := map[model.DeviceID]map[model.StreamID]bool{}
	see := func(d model.DeviceID, s model.StreamID) {
		if streams[d] == nil {
			streams[d] = map[model.StreamID]bool{}
		}
		streams[d][s] = true
	}
	for i := range t.Kernels {
		see(t.Kernels[i].Device, t.Kernels[i].Stream)
	}
	for i := range t.MemOps {
		see(t.MemOps[i].Device, t.MemOps[i].Stream)
	}
	for _, d := range t.Devices {
		pid := strconv.FormatInt(int64(d.ID), 10)
		label := "GPU " + pid
		if d.Kind == model.DeviceAccel {
			label = "MTIA " + pid
		}
		meta("process_name", pid, "0", t0, `{"name": `+string(tracejson.AppendString(nil, procName))+`}`)
		meta("process_labels", pid, "0", t0, `{"labels": `+string(tracejson.AppendString(nil, label))+`}`)
		meta("process_sort_index", pid, "0", t0, `{"sort_index": `+strconv.FormatInt(5000000+int64(d.ID), 10)+`}`)
		var ss []model.StreamID
		for s := range streams[d.ID] {
			ss = append(ss, s)
		}
		sort.Slice(ss, func(i, j int) bool { return ss[i] < ss[j] })
		for _, s := range ss {
			name := "stream " + strconv.FormatInt(int64(s), 10) + " "
			tid := strconv.FormatInt(int64(s), 10)
			if g.l.Legacy {
				name = strings.TrimSpace(name)
				tid = `"` + name + `"`
			}
			meta("thread_name", pid, tid, t0, `{"name": `+string(tracejson.AppendString(nil, name))+`}`)
		}
	}
	for _, th := range t.Threads {
		if th.Name == "" {
			continue
		}
		tid := strconv.FormatInt(th.TID, 10)
		if g.l.Legacy {
			tid = `"` + tid + `"`
		}
		meta("thread_name", strconv.FormatInt(th.PID, 10), tid, t0, `{"name": `+string(tracejson.AppendString(nil, th.Name))+`}`)
	}
	return out
}
