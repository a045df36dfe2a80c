package kineto

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

// The mapping: typed events (event.go) → model records, collected in
// chunked tables. The builder never sees JSON text; FuzzBuild drives it
// with arbitrary events.

// category of an X event.
type category uint8

const (
	catUnknown category = iota
	catCPUOp
	catUser
	catPython
	catGPUUser
	catRuntime
	catDriver
	catAccelRuntime
	catKernel
	catAccelKernel
	catMemcpy
	catMemset
	catSync
	catInstant
	catTrace
	catFlow
	catFwdBwd
	catProfilerRange
	catOverhead
	catNone // no cat key
)

func categorize(b []byte) category {
	switch string(b) {
	case "cpu_op", "Operator":
		return catCPUOp
	case "user_annotation":
		return catUser
	case "python_function":
		return catPython
	case "gpu_user_annotation":
		return catGPUUser
	case "cuda_runtime", "Runtime":
		return catRuntime
	case "cuda_driver":
		return catDriver
	case "mtia_runtime":
		return catAccelRuntime
	case "kernel", "Kernel":
		return catKernel
	case "mtia_ccp_events":
		return catAccelKernel
	case "gpu_memcpy", "Memcpy":
		return catMemcpy
	case "gpu_memset", "Memset":
		return catMemset
	case "cuda_sync":
		return catSync
	case "cpu_instant_event":
		return catInstant
	case "Trace":
		return catTrace
	case "ac2g", "async", "async_gpu", "async_cpu_to_gpu":
		return catFlow
	case "fwdbwd":
		return catFwdBwd
	case "cuda_profiler_range":
		return catProfilerRange
	case "overhead":
		return catOverhead
	}
	return catUnknown
}

// flow is one ac2g-style flow end kept for the correlation fallback.
type flow struct {
	pid, tid, ts, id int64
	start            bool
}

type laneKey struct{ pid, tid int64 }

// builder maps events to the model and holds what finish needs.
type builder struct {
	t *model.Trace
	w *importers.Warner

	base    int64
	hasBase bool
	minTS   int64
	haveTS  bool

	threadCache   laneKey
	threadCacheID model.ThreadID
	haveThread    bool
	cpuTrackID    model.TrackID // model.CPUTrack, once interned
	haveCPUTrack  bool
	synth         map[string]int64 // non-numeric pid/tid strings → synthetic ids

	classCache []uint8 // StringID → APIClass+1
	commCache  []uint8 // StringID → 1 no, 2 yes
	memCache   map[model.StringID][3]uint8

	devSeen     map[model.DeviceID]bool
	accelDevs   map[model.DeviceID]bool
	lastDev     model.DeviceID
	haveLastDev bool
	hipSeen     bool
	cudaSeen    bool
	rocmKernel  bool

	procName   map[int64]string
	threadName map[laneKey]string

	props     []devProps
	window    model.Interval
	hasWindow bool
	unknown   map[string]int
	profRange int
	schema    string
	haveRank  bool

	// The model tables, collected in chunks until finish.
	ranges    table[model.Range]
	apis      table[model.APICall]
	kernels   table[model.Kernel]
	memOps    table[model.MemOp]
	syncs     table[model.SyncEvent]
	colls     table[model.Collective]
	memEvents table[model.MemEvent]
	flowT     table[flow]
}

func newBuilder(t *model.Trace, w *importers.Warner) *builder {
	return &builder{
		t:          t,
		w:          w,
		synth:      map[string]int64{},
		memCache:   map[model.StringID][3]uint8{},
		devSeen:    map[model.DeviceID]bool{},
		accelDevs:  map[model.DeviceID]bool{},
		procName:   map[int64]string{},
		threadName: map[laneKey]string{},
		unknown:    map[string]int{},
	}
}

func (b *builder) warn(idx int, off int64, format string, args ...any) {
	b.w.Warn(fmt.Sprintf("event %d (byte %d)", idx, off), format, args...)
}

// laneInt turns a pid/tid into a number: ints as they are, decimal strings
// ("2662278912") and "stream 7" to their number, other strings ("Spans",
// "") to stable synthetic ids above 2^40.
func (b *builder) laneInt(l *laneVal) (int64, bool) {
	switch l.kind {
	case lnInt:
		return l.n, true
	case lnStr:
		s := l.s
		if bytes.HasPrefix(s, []byte("stream ")) {
			s = bytes.TrimSpace(s[len("stream "):])
		}
		if v, ok := parseInt(s); ok && !bytes.ContainsAny(s, ".eE") {
			return v, true
		}
		if id, ok := b.synth[string(l.s)]; ok {
			return id, false
		}
		id := int64(1<<40) + int64(len(b.synth))
		b.synth[string(l.s)] = id
		return id, false
	}
	return 0, false
}

// cpuTrack returns the track of CPU ranges (no device, stream or domain).
func (b *builder) cpuTrack() model.TrackID {
	if !b.haveCPUTrack {
		b.cpuTrackID, b.haveCPUTrack = b.t.InternTrack(model.CPUTrack), true
	}
	return b.cpuTrackID
}

func (b *builder) thread(ev *event) model.ThreadID {
	pid, _ := b.laneInt(&ev.pid)
	tid, tidNum := b.laneInt(&ev.tid)
	k := laneKey{pid, tid}
	if b.haveThread && k == b.threadCache {
		return b.threadCacheID
	}
	id := b.t.ThreadFor(pid, tid)
	if !tidNum && ev.tid.kind == lnStr && b.t.Threads[id].Name == "" {
		b.t.Threads[id].Name = string(ev.tid.s)
	}
	b.threadCache, b.threadCacheID, b.haveThread = k, id, true
	return id
}

func (b *builder) device(d model.DeviceID) {
	if b.haveLastDev && d == b.lastDev {
		return
	}
	if !b.devSeen[d] {
		b.devSeen[d] = true
		b.t.EnsureDevice(d)
	}
	b.lastDev, b.haveLastDev = d, true
}

// gpuLane returns the device and stream of a GPU-side event.
func (b *builder) gpuLane(ev *event) (model.DeviceID, model.StreamID) {
	a := &ev.a
	var dev int64
	if a.hasDevice {
		dev = a.device
	} else {
		dev, _ = b.laneInt(&ev.pid)
	}
	var st int64
	switch {
	case a.hasStream:
		st = a.stream
	case a.hasStreamID: // MTIA
		st = a.streamID
	default:
		st, _ = b.laneInt(&ev.tid)
	}
	if dev < -1 || dev > 1<<20 {
		dev = -1
	}
	return model.DeviceID(dev), model.StreamID(st)
}

func (b *builder) apiClass(id model.StringID) model.APIClass {
	if int(id) < len(b.classCache) && b.classCache[id] != 0 {
		return model.APIClass(b.classCache[id] - 1)
	}
	for int(id) >= len(b.classCache) {
		b.classCache = append(b.classCache, 0)
	}
	c := model.ClassifyAPI(b.t.Str(id))
	b.classCache[id] = uint8(c) + 1
	return c
}

func (b *builder) isComm(id model.StringID) bool {
	if int(id) < len(b.commCache) && b.commCache[id] != 0 {
		return b.commCache[id] == 2
	}
	for int(id) >= len(b.commCache) {
		b.commCache = append(b.commCache, 0)
	}
	v := uint8(1)
	if model.IsCommKernelName(b.t.Str(id)) {
		v = 2
	}
	b.commCache[id] = v
	return v == 2
}

// times converts ts/dur; ok is false (with a warning) for a spoiled record.
func (b *builder) times(ev *event, idx int, off int64, needDur bool) (start, end int64, ok bool) {
	if ev.tsStr {
		b.warn(idx, off, "ts is not a number; skipped")
		return 0, 0, false
	}
	if ev.ts == nil {
		b.warn(idx, off, "missing ts; skipped")
		return 0, 0, false
	}
	s, good := parseNs(ev.ts)
	if !good {
		b.warn(idx, off, "bad ts %q; skipped", ev.ts)
		return 0, 0, false
	}
	var d int64
	if needDur {
		if ev.durStr {
			b.warn(idx, off, "dur is not a number; skipped")
			return 0, 0, false
		}
		if ev.dur == nil {
			b.warn(idx, off, "missing dur; skipped")
			return 0, 0, false
		}
		d, good = parseNs(ev.dur)
		if !good {
			b.warn(idx, off, "bad dur %q; skipped", ev.dur)
			return 0, 0, false
		}
		if d < 0 {
			b.warn(idx, off, "negative dur %s; skipped", ev.dur)
			return 0, 0, false
		}
		if d > int64(model.MaxTime) || s > int64(model.MaxTime)-d {
			b.warn(idx, off, "dur %s overflows; skipped", ev.dur)
			return 0, 0, false
		}
	}
	if !model.ValidTime(model.Time(s)) {
		b.warn(idx, off, "ts %s out of range; skipped", ev.ts)
		return 0, 0, false
	}
	if !b.haveTS || s < b.minTS {
		b.minTS, b.haveTS = s, true
	}
	return s, s + d, true
}

// handle turns one parsed event into model records.
func (b *builder) handle(ev *event, idx int, off int64) {
	if ev.badType != "" {
		b.warn(idx, off, "field %q has the wrong type; skipped", ev.badType)
		return
	}
	if ev.phLen == 0 {
		b.warn(idx, off, "missing ph; skipped")
		return
	}
	cat := catNone
	if ev.hasCat {
		cat = categorize(ev.cat)
	}
	if ev.phLen != 1 {
		b.warn(idx, off, "unknown ph; skipped")
		return
	}
	switch ev.ph {
	case 'X':
	case 'M':
		b.meta(ev)
		return
	case 'i', 'I':
		if string(ev.name) == "[memory]" {
			b.memory(ev, idx, off)
		}
		return
	case 's', 'f', 't':
		if cat == catFlow && ev.hasID {
			s, ok := parseNs(ev.ts)
			if !ok {
				b.warn(idx, off, "bad ts on flow; skipped")
				return
			}
			pid, _ := b.laneInt(&ev.pid)
			tid, _ := b.laneInt(&ev.tid)
			b.flowT.add(flow{pid: pid, tid: tid, ts: s, id: ev.id, start: ev.ph == 's'})
		}
		return
	default:
		b.warn(idx, off, "unsupported ph %q; skipped", ev.ph)
		return
	}
	// Complete events.
	switch cat {
	case catFlow, catFwdBwd, catOverhead, catInstant:
		return
	case catUnknown, catNone:
		name := "(none)"
		if cat == catUnknown {
			name = string(ev.cat)
		}
		if _, ok := b.unknown[name]; ok || len(b.unknown) < maxUnknownCats {
			b.unknown[name]++
		}
		return
	}
	start, end, ok := b.times(ev, idx, off, true)
	if !ok {
		return
	}
	b.complete(ev, cat, idx, off, start, end)
}

// complete maps a complete (X) event of a known category, its times read.
func (b *builder) complete(ev *event, cat category, idx int, off int64, start, end int64) {
	t := b.t
	a := &ev.a
	name := t.Strings.InternBytes(ev.name)
	switch cat {
	case catCPUOp, catUser, catPython:
		kind := model.RangeCPUOp
		switch {
		case cat == catPython:
			kind = model.RangePython
		case bytes.HasPrefix(ev.name, []byte("ProfilerStep#")):
			kind = model.RangeStep
		case cat == catUser:
			kind = model.RangeUser
		}
		th := b.thread(ev)
		b.ranges.add(model.Range{Start: model.Time(start), End: model.Time(end), ExternalID: a.ext,
			Name: name, Thread: th, Track: b.cpuTrack(), Kind: kind})
		if cat == catCPUOp && a.inDims != nil && a.hasExt && a.ext > 0 && model.ShapedOp(string(ev.name)) {
			b.opShape(ev, idx, off, name)
		}
		if cat == catCPUOp && string(ev.name) == "record_param_comms" &&
			(a.hasCollName || a.hasNelems || a.hasPGName || a.hasPGID || a.hasGroupSize || a.hasCollSeq) {
			b.collective(ev, start, end, model.NoDevice, model.NoStream, model.CollFromCPU, name)
		}
	case catGPUUser, catProfilerRange:
		dev, st := b.gpuLane(ev)
		if dev < 0 {
			b.warn(idx, off, "GPU annotation without a device; skipped")
			return
		}
		b.device(dev)
		if cat == catProfilerRange {
			b.profRange++
		}
		b.ranges.add(model.Range{Start: model.Time(start), End: model.Time(end), ExternalID: a.ext,
			Name: name, Thread: model.NoThread, Track: t.InternTrack(model.RangeTrack{Device: dev, Stream: st}), Kind: model.RangeGPUAnnotation})
	case catRuntime, catDriver, catAccelRuntime:
		src := model.APIRuntime
		switch cat {
		case catDriver:
			src = model.APIDriver
		case catAccelRuntime:
			src = model.APIAccel
		}
		if cat == catRuntime && len(ev.name) > 3 {
			switch {
			case bytes.HasPrefix(ev.name, []byte("hip")):
				b.hipSeen = true
			case bytes.HasPrefix(ev.name, []byte("cuda")):
				b.cudaSeen = true
			}
		}
		b.apis.add(model.APICall{Start: model.Time(start), End: model.Time(end), Correlation: a.corr,
			ExternalID: a.ext, Thread: b.thread(ev), Ident: t.InternAPI(model.APIIdent{Name: name, Class: b.apiClass(name), Source: src})})
	case catKernel, catAccelKernel:
		dev, st := b.gpuLane(ev)
		if dev < 0 {
			b.warn(idx, off, "kernel without a device; skipped")
			return
		}
		b.device(dev)
		if cat == catAccelKernel {
			if !b.accelDevs[dev] {
				b.accelDevs[dev] = true
			}
		} else if !b.rocmKernel && string(a.kind) == "Dispatch Kernel" {
			b.rocmKernel = true
		}
		if name == model.NoString {
			name = t.Intern("(unnamed kernel)")
		}
		b.kernels.add(model.Kernel{Start: model.Time(start), End: model.Time(end), Correlation: a.corr,
			ExternalID: a.ext, Name: name, Device: dev,
			Config: t.InternConfig(model.LaunchConfig{Grid: a.grid, Block: a.block, Registers: clamp32(a.regs), SharedMem: clamp32(a.smem),
				Stream: st, GraphID: a.graphID})})
		if cat == catKernel && b.isComm(name) {
			b.collective(ev, start, end, dev, st, model.CollFromKernel, name)
		}
	case catMemcpy, catMemset:
		dev, st := b.gpuLane(ev)
		if dev < 0 {
			b.warn(idx, off, "memory operation without a device; skipped")
			return
		}
		b.device(dev)
		kind, src, dst := b.memKind(name, cat == catMemset, a.kind)
		bytesN := int64(-1)
		if a.hasBytes && a.bytes >= 0 {
			bytesN = a.bytes
		}
		b.memOps.add(model.MemOp{Start: model.Time(start), End: model.Time(end), Correlation: a.corr,
			ExternalID: a.ext, Bytes: bytesN, Stream: st, Name: name, Device: dev, Kind: kind, Src: src, Dst: dst})
	case catSync:
		dev, st := b.gpuLane(ev)
		if st == 4294967295 || st < 0 {
			st = model.NoStream
		}
		if dev < 0 {
			dev = model.NoDevice
		} else {
			b.device(dev)
		}
		b.syncs.add(model.SyncEvent{Start: model.Time(start), End: model.Time(end), Correlation: a.corr,
			Stream: st, Device: dev, Kind: syncKind(ev.name, a.syncKind)})
	case catTrace:
		iv := model.Interval{Start: model.Time(start), End: model.Time(end)}
		if !b.hasWindow {
			b.window, b.hasWindow = iv, true
		} else {
			b.window.Start = min(b.window.Start, iv.Start)
			b.window.End = max(b.window.End, iv.End)
		}
	}
}

func clamp32(v int64) int32 {
	if v > 1<<31-1 || v < -(1<<31) {
		return 0
	}
	return int32(v)
}

func syncKind(name, kind []byte) model.SyncKind {
	k := strings.ToLower(string(kind))
	n := strings.ToLower(string(name))
	switch {
	case strings.Contains(k, "wait") || strings.Contains(n, "wait"):
		return model.SyncStreamWait
	case strings.Contains(k, "event") || strings.Contains(n, "event"):
		return model.SyncOnEvent
	case strings.Contains(k, "context") || strings.Contains(n, "context") || strings.Contains(n, "device"):
		return model.SyncContext
	case strings.Contains(k, "stream") || strings.Contains(n, "stream"):
		return model.SyncStream
	}
	return model.SyncUnknown
}

var memKinds = map[string]model.MemKind{"pageable": model.MemPageable, "pinned": model.MemPinned, "device": model.MemDevice,
	"managed": model.MemManaged, "array": model.MemArray}

var copyKinds = map[string]model.MemOpKind{"htod": model.MemHtoD, "dtoh": model.MemDtoH, "dtod": model.MemDtoD,
	"htoh": model.MemHtoH, "ptop": model.MemPtoP, "dtoa": model.MemDtoD, "atod": model.MemDtoD}

// memKind reads "Memcpy HtoD (Pageable -> Device)" / "Memset (Device)", or
// the ROCm args kind ("HtoD").
func (b *builder) memKind(name model.StringID, set bool, argKind []byte) (model.MemOpKind, model.MemKind, model.MemKind) {
	if v, ok := b.memCache[name]; ok && len(argKind) == 0 {
		return model.MemOpKind(v[0]), model.MemKind(v[1]), model.MemKind(v[2])
	}
	n := b.t.Str(name)
	kind := model.MemUnknown
	var src, dst model.MemKind
	if set {
		kind = model.MemSet
	}
	fields := strings.Fields(n)
	if !set && len(fields) >= 2 {
		kind = copyKinds[strings.ToLower(fields[1])]
	}
	if kind == model.MemUnknown && len(argKind) > 0 {
		kind = copyKinds[strings.ToLower(string(argKind))]
	}
	if i := strings.IndexByte(n, '('); i >= 0 {
		inner := strings.TrimSuffix(n[i+1:], ")")
		if from, to, ok := strings.Cut(inner, "->"); ok {
			src = memKinds[strings.ToLower(strings.TrimSpace(from))]
			dst = memKinds[strings.ToLower(strings.TrimSpace(to))]
		} else {
			dst = memKinds[strings.ToLower(strings.TrimSpace(inner))]
		}
	}
	if len(argKind) == 0 {
		b.memCache[name] = [3]uint8{uint8(kind), uint8(src), uint8(dst)}
	}
	return kind, src, dst
}

var dtypeSizes = map[string]int64{
	"byte": 1, "char": 1, "bool": 1, "uint8": 1, "int8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e4m3fnuz": 1, "float8_e5m2fnuz": 1,
	"short": 2, "half": 2, "bfloat16": 2, "int16": 2, "uint16": 2, "float16": 2,
	"int": 4, "float": 4, "int32": 4, "uint32": 4, "float32": 4, "complexhalf": 4,
	"long": 8, "double": 8, "int64": 8, "uint64": 8, "float64": 8, "complexfloat": 8,
	"complexdouble": 16,
}

func (b *builder) collective(ev *event, start, end int64, dev model.DeviceID, st model.StreamID, src model.CollSource, name model.StringID) {
	t := b.t
	a := &ev.a
	op := model.CollUnknown
	if a.hasCollName && len(a.collName) > 0 {
		op = model.CollOpFromName(string(a.collName))
	}
	if op == model.CollUnknown && src == model.CollFromKernel {
		op = model.CollOpFromName(t.Str(name))
	}
	bytesN := int64(-1)
	if a.hasNelems && a.nelems >= 0 {
		if sz := dtypeSizes[strings.ToLower(string(a.dtype))]; sz > 0 && a.nelems <= (1<<62)/sz {
			bytesN = a.nelems * sz
		}
	}
	group := model.NoString
	switch {
	case a.hasPGName && len(a.pgName) > 0:
		group = t.Strings.InternBytes(a.pgName)
	case a.hasPGID:
		group = t.Intern(strconv.FormatInt(a.pgID, 10))
	}
	rank := int32(model.NoRank)
	if a.hasRank && a.rank >= 0 && a.rank < 1<<31 {
		rank = int32(a.rank)
	}
	gs := int32(0)
	if a.hasGroupSize && a.groupSize > 0 && a.groupSize < 1<<31 {
		gs = int32(a.groupSize)
	}
	seq := int64(-1)
	if a.hasCollSeq && a.collSeq >= 0 {
		seq = a.collSeq
	}
	b.colls.add(model.Collective{Start: model.Time(start), End: model.Time(end), Bytes: bytesN, Seq: seq,
		Correlation: a.corr, ExternalID: a.ext, Stream: st, Dtype: t.Strings.InternBytes(a.dtype), Group: group, Device: dev,
		GroupSize: gs, Rank: rank, Op: op, Source: src})
}

func (b *builder) memory(ev *event, idx int, off int64) {
	start, _, ok := b.times(ev, idx, off, false)
	if !ok {
		return
	}
	a := &ev.a
	dev := model.NoDevice
	if a.hasDevType && a.devType != 0 && a.hasDevID && a.devID >= 0 && a.devID < 1<<20 {
		dev = model.DeviceID(a.devID)
		b.device(dev)
	}
	alloc, res := int64(-1), int64(-1)
	if a.hasTotalAlloc {
		alloc = a.totalAlloc
	}
	if a.hasTotalRes {
		res = a.totalRes
	}
	b.memEvents.add(model.MemEvent{Time: model.Time(start), Bytes: a.memBytes, Addr: uint64(a.addr),
		TotalAllocated: alloc, TotalReserved: res, Thread: b.thread(ev), Device: dev})
}

func (b *builder) meta(ev *event) {
	if ev.pid.kind != lnInt && !(ev.pid.kind == lnStr && isDigits(ev.pid.s)) {
		return
	}
	pid, _ := b.laneInt(&ev.pid)
	a := &ev.a
	switch string(ev.name) {
	case "process_name":
		if _, ok := b.procName[pid]; !ok && a.hasMName {
			b.procName[pid] = string(a.mName)
		}
	case "thread_name":
		tid, _ := b.laneInt(&ev.tid)
		k := laneKey{pid, tid}
		if _, ok := b.threadName[k]; !ok && a.hasMName {
			b.threadName[k] = string(a.mName)
		}
	}
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// exact size.
type table[T any] struct {
	chunks [][]T
	cur    []T
	n      int // elements in chunks
}

func (c *table[T]) add(v T) {
	if len(c.cur) == cap(c.cur) {
		size := 256
		if c.cur != nil {
			c.chunks = append(c.chunks, c.cur)
			c.n += len(c.cur)
			size = min(2*cap(c.cur), 1<<16)
		}
		c.cur = make([]T, 0, size)
	}
	c.cur = append(c.cur, v)
}

// bytes is the size of the elements added.
func (c *table[T]) bytes() uintptr {
	var zero T
	return uintptr(c.len()) * unsafe.Sizeof(zero)
}

// len is the number of elements added.
func (c *table[T]) len() int { return c.n + len(c.cur) }

// each calls f on every element, in the order added.
func (c *table[T]) each(f func(*T)) {
	c.any(func(v *T) bool { f(v); return false })
}

// any reports whether f holds for some element, trying them in the order
// added.
func (c *table[T]) any(f func(*T) bool) bool {
	for _, ch := range c.chunks {
		for i := range ch {
			if f(&ch[i]) {
				return true
			}
		}
	}
	for i := range c.cur {
		if f(&c.cur[i]) {
			return true
		}
	}
	return false
}

// flush appends the table to dst and empties it.
func (c *table[T]) flush(dst []T) []T {
	n := c.len()
	if n == 0 {
		return dst
	}
	dst = slices.Grow(dst, n)
	for i, ch := range c.chunks {
		dst = append(dst, ch...)
		c.chunks[i] = nil // collectable while the rest is copied
	}
	dst = append(dst, c.cur...)
	*c = table[T]{}
	return dst
}

// relinkExternalIDs repairs the GPU → CPU-op link of 2022–23 builds, whose
// GPU-side and runtime-side "External id" is just the correlation id and
// points at no cpu_op. When (nearly) every GPU op with both ids has them
// equal, each runtime/driver call takes the External id of the innermost
// cpu_op enclosing its start on its thread, and each GPU op (and kernel
// collective) takes the one of the call with its correlation (0 when that
