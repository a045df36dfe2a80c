package kinetogen

import (
	"bufio"
	"io"
	"os"
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
