package perfetto

import (
	"bufio"
	"compress/gzip"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/internal/tracejson"
	"github.com/tracedx/tracedx/model"
)

// Schema names the shape of the JSON tracedx writes (in otherData).
const Schema = "tracedx.perfetto/v1"

// Options adjusts what is written.
type Options struct {
	// Range, when set, keeps only events whose [start, end] intersects it
	// (closed bounds, on the set's clock). Process and thread names are
	// always written.
	Range *model.Interval
	// Findings are drawn on the "tracedx findings" track (those with evidence).
	Findings []model.Finding
	// NoFlows leaves out the launch → kernel flow arrows.
	NoFlows bool
	// Absolute keeps times as they are. Otherwise, when the set's times are
	// epoch-scale (see Origin), they are written relative to an origin so
	// that the microsecond doubles viewers parse keep nanosecond precision;
	// the origin is recorded in otherData.time_origin_ns.
	Absolute bool
	// Gzip compresses the output (a .json.gz file, which ui.perfetto.dev
	// and chrome://tracing open as they are); the bytes stay deterministic
	// (no name, no time in the gzip header).
	Gzip bool
	// MaxNameBytes caps every name and string argument written (kernel,
	// range and API names, paths) with export.ShortenName: 0 means
	// export.DefaultMaxNameBytes, a negative value no cap.
	MaxNameBytes int
}

// largeTime is where times stop fitting a double's 53-bit mantissa at
// nanosecond resolution once written in microseconds with three decimals.
const largeTime = int64(1) << 53 / 8

// Origin returns the origin Write subtracts from the times of set: 0 when every
// time is small, else the earliest kernel, memory operation, API call, range
// or counter sample start (on the set clock) rounded down to a whole second.
func Origin(set *model.TraceSet) int64 {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	see := func(t model.Time, off int64) {
		v := int64(t) + off
		lo, hi = min(lo, v), max(hi, v)
	}
	for i, t := range set.Traces {
		var off int64
		if i < len(set.Offsets) {
			off = int64(set.Offsets[i])
		}
		// Tables are sorted by start: the first row of each holds its minimum.
		if len(t.Kernels) > 0 {
			see(t.Kernels[0].Start, off)
			see(t.Kernels[len(t.Kernels)-1].End, off)
		}
		if len(t.MemOps) > 0 {
			see(t.MemOps[0].Start, off)
		}
		if len(t.APICalls) > 0 {
			see(t.APICalls[0].Start, off)
		}
		if len(t.Ranges) > 0 {
			see(t.Ranges[0].Start, off)
		}
		if len(t.Samples) > 0 {
			see(t.Samples[0].Time, off)
		}
	}
	if lo > hi || (lo > -largeTime && hi < largeTime) {
		return 0
	}
	return lo - ((lo%int64(model.Second))+int64(model.Second))%int64(model.Second)
}

// Write writes set as Chrome trace-event JSON to w.
func Write(w io.Writer, set *model.TraceSet, opts Options) error {
	if opts.Gzip {
		zw := gzip.NewWriter(w)
		opts.Gzip = false
		if err := Write(zw, set, opts); err != nil {
			zw.Close()
			return err
		}
		return zw.Close()
	}
	e := &encoder{w: bufio.NewWriterSize(w, 1<<16), win: opts.Range, maxName: export.NameCap(opts.MaxNameBytes)}
	if !opts.Absolute {
		e.origin = Origin(set)
	}
	e.header(set)
	lay := layout(set)
	findings := placeFindings(set, opts.Findings, opts.Range)
	findingsPid := lay.next
	e.metadata(lay)
	if len(findings.slices) > 0 {
		e.findingsMeta(findingsPid, findings)
	}
	for i, t := range set.Traces {
		tl := &lay.traces[i]
		e.kernels(t, tl)
		e.memops(t, tl)
		e.apiCalls(t, tl)
		e.ranges(t, tl)
		e.counters(t, tl)
		e.memory(t, tl)
		if !opts.NoFlows {
			e.flows(t, tl)
		}
	}
	e.findings(findingsPid, findings)
	e.raw("\n]}\n")
	if e.err != nil {
		return e.err
	}
	return e.w.Flush()
}

// encoder writes events one per line; b is the scratch buffer of the event
// being built.
type encoder struct {
	w      *bufio.Writer
	b      []byte
	win    *model.Interval
	n      int // events written
	flowID int64
	origin int64 // subtracted from every ts
	// maxName caps strings (0: no cap); see Options.MaxNameBytes.
	maxName int
	err     error
}

func (e *encoder) raw(s string) {
	if e.err == nil {
		_, e.err = e.w.WriteString(s)
	}
}

// in reports whether [start, end] (already on the set clock) intersects the window.
func (e *encoder) in(start, end int64) bool {
	return e.win == nil || (start <= int64(e.win.End) && end >= int64(e.win.Start))
}

// begin starts an event object with its phase, pid and tid.
func (e *encoder) begin(ph string, pid int, tid int64) {
	e.b = e.b[:0]
	if e.n > 0 {
		e.b = append(e.b, ",\n"...)
	} else {
		e.b = append(e.b, '\n')
	}
	e.n++
	e.b = append(e.b, `{"ph":"`...)
	e.b = append(e.b, ph...)
	e.b = append(e.b, `","pid":`...)
	e.b = strconv.AppendInt(e.b, int64(pid), 10)
	e.b = append(e.b, `,"tid":`...)
	e.b = strconv.AppendInt(e.b, tid, 10)
}

// end closes the event and writes it.
func (e *encoder) end() {
	e.b = append(e.b, '}')
	if e.err == nil {
		_, e.err = e.w.Write(e.b)
	}
}

func (e *encoder) str(key, v string) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, key...)
	e.b = append(e.b, '"', ':')
	e.b = tracejson.AppendString(e.b, export.ShortenName(v, e.maxName))
}

func (e *encoder) int(key string, v int64) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, key...)
	e.b = append(e.b, '"', ':')
	e.b = strconv.AppendInt(e.b, v, 10)
}

// ts writes the event time: ns on the set clock, minus the output origin.
func (e *encoder) ts(key string, ns int64) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, key...)
	e.b = append(e.b, '"', ':')
	e.b = tracejson.AppendMicros(e.b, ns-e.origin)
}

func (e *encoder) dur(ns int64) {
	e.b = append(e.b, `,"dur":`...)
	e.b = tracejson.AppendMicros(e.b, ns)
}

// args opens the args object; fields then go through arg* and closeArgs ends it.
func (e *encoder) args() { e.b = append(e.b, `,"args":{`...) }

func (e *encoder) argSep() {
	if c := e.b[len(e.b)-1]; c != '{' {
		e.b = append(e.b, ',')
	}
}

func (e *encoder) argStr(key, v string) {
	e.argSep()
	e.b = tracejson.AppendString(e.b, key)
	e.b = append(e.b, ':')
	e.b = tracejson.AppendString(e.b, export.ShortenName(v, e.maxName))
}

func (e *encoder) argInt(key string, v int64) {
	e.argSep()
	e.b = tracejson.AppendString(e.b, key)
	e.b = append(e.b, ':')
	e.b = strconv.AppendInt(e.b, v, 10)
}

func (e *encoder) argDims(key string, d [3]int32) {
	e.argSep()
	e.b = tracejson.AppendString(e.b, key)
	e.b = append(e.b, ':', '[')
	for i, v := range d {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = strconv.AppendInt(e.b, int64(v), 10)
	}
	e.b = append(e.b, ']')
}

// launchArgs writes a kernel's launch dimensions and resources, those known.
func (e *encoder) launchArgs(lc model.LaunchConfig) {
	if lc.Grid != [3]int32{} {
		e.argDims("grid", lc.Grid)
	}
	if lc.Block != [3]int32{} {
		e.argDims("block", lc.Block)
	}
	if lc.Registers != 0 {
		e.argInt("registers", int64(lc.Registers))
	}
	if lc.SharedMem != 0 {
		e.argInt("shared_mem", int64(lc.SharedMem))
	}
}

func (e *encoder) closeArgs() { e.b = append(e.b, '}') }

// slice starts an "X" event (zero-length ones included), or, when instant is
// set and end <= start, an instant "i" event of thread scope; with its name
// and category.
func (e *encoder) slice(pid int, tid int64, name, cat string, start, end int64, instant bool) {
	if end < start {
		end = start
	}
	if !instant || end > start {
		e.begin("X", pid, tid)
		e.ts("ts", start)
		e.dur(end - start)
	} else {
		e.begin("i", pid, tid)
		e.ts("ts", start)
		e.str("s", "t")
	}
	e.str("name", name)
	e.str("cat", cat)
}

func (e *encoder) header(set *model.TraceSet) {
	e.b = append(e.b[:0], `{"displayTimeUnit":"ns","otherData":{"tool":"tracedx","schema":`...)
	e.b = tracejson.AppendString(e.b, Schema)
	e.b = append(e.b, `,"inputs":[`...)
	for i, t := range set.Traces {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.b = tracejson.AppendString(e.b, export.ShortenName(t.Path, e.maxName))
	}
	e.b = append(e.b, ']')
	if e.origin != 0 {
		e.b = append(e.b, `,"time_origin_ns":`...)
		e.b = strconv.AppendInt(e.b, e.origin, 10)
	}
	if e.win != nil {
		e.b = append(e.b, `,"window_start_ns":`...)
		e.b = strconv.AppendInt(e.b, int64(e.win.Start), 10)
		e.b = append(e.b, `,"window_end_ns":`...)
		e.b = strconv.AppendInt(e.b, int64(e.win.End), 10)
	}
	e.b = append(e.b, `},"traceEvents":[`...)
	if e.err == nil {
		_, e.err = e.w.Write(e.b)
	}
}

// traceLayout maps one trace's devices and host processes to output pids.
type traceLayout struct {
	t       *model.Trace
	off     int64
	devPid  map[model.DeviceID]int
	hostPid map[int64]int
	// streams[pid] lists the stream lanes used on a device process.
	streams map[int][]int64
	// counterPid is the process holding host-side counters (0 = none).
	counterPid int
	procs      []procMeta
}

type procMeta struct {
	pid     int
	name    string
	sort    int
	threads []threadMeta
}

type threadMeta struct {
	tid  int64
	name string
}

type setLayout struct {
	traces []traceLayout
	next   int // the next free pid
}

func rankLabel(t *model.Trace) string {
	if t.Rank == model.NoRank {
		return ""
	}
	return "rank " + strconv.Itoa(t.Rank) + " · "
}

func layout(set *model.TraceSet) *setLayout {
	lay := &setLayout{next: 1}
	for i, t := range set.Traces {
		tl := traceLayout{t: t, devPid: map[model.DeviceID]int{}, hostPid: map[int64]int{}, streams: map[int][]int64{}}
		if i < len(set.Offsets) {
			tl.off = int64(set.Offsets[i])
		}
		// Devices: those described and those that appear in events.
		devs := map[model.DeviceID]bool{}
		for _, d := range t.Devices {
			devs[d.ID] = true
		}
		streams := map[model.DeviceID]map[int64]bool{}
		use := func(d model.DeviceID, s model.StreamID) {
			if d == model.NoDevice {
				return
			}
			devs[d] = true
			if streams[d] == nil {
				streams[d] = map[int64]bool{}
			}
			streams[d][int64(s)] = true
		}
		for k := range t.Kernels {
			use(t.Kernels[k].Device, t.KernelStream(&t.Kernels[k]))
		}
		for k := range t.MemOps {
			use(t.MemOps[k].Device, t.MemOps[k].Stream)
		}
		for k := range t.Ranges {
			if r := &t.Ranges[k]; r.Thread == model.NoThread {
				tr := t.RangeTrack(r)
				use(tr.Device, tr.Stream)
			}
		}
		memDevices(t, devs)
		hostCounters := false
		for _, c := range t.Counters {
			if c.Device == model.NoDevice {
				hostCounters = true
			} else {
				devs[c.Device] = true
			}
		}
		devIDs := make([]model.DeviceID, 0, len(devs))
		for d := range devs {
			devIDs = append(devIDs, d)
		}
		sort.Slice(devIDs, func(a, b int) bool { return devIDs[a] < devIDs[b] })
		for _, d := range devIDs {
			pid := lay.next
			lay.next++
			tl.devPid[d] = pid
			name := rankLabel(t) + "GPU " + strconv.Itoa(int(d))
			if dev, ok := t.Device(d); ok && dev.Name != "" {
				name += ": " + dev.Name
			}
			pm := procMeta{pid: pid, name: name, sort: pid}
			ss := make([]int64, 0, len(streams[d]))
			for s := range streams[d] {
				ss = append(ss, s)
			}
			sort.Slice(ss, func(a, b int) bool { return ss[a] < ss[b] })
			for _, s := range ss {
				pm.threads = append(pm.threads, threadMeta{tid: s, name: "stream " + strconv.FormatInt(s, 10)})
			}
			tl.streams[pid] = ss
			tl.procs = append(tl.procs, pm)
		}
		// Host processes: from the process table and the threads.
		pids := map[int64]bool{}
		for _, p := range t.Processes {
			pids[p.PID] = true
		}
		for _, th := range t.Threads {
			pids[th.PID] = true
		}
		hostIDs := make([]int64, 0, len(pids))
		for p := range pids {
			hostIDs = append(hostIDs, p)
		}
		sort.Slice(hostIDs, func(a, b int) bool { return hostIDs[a] < hostIDs[b] })
		for _, p := range hostIDs {
			pid := lay.next
			lay.next++
			tl.hostPid[p] = pid
			name := t.ProcessName(p)
			if name == "" {
				name = "process"
			}
			pm := procMeta{pid: pid, name: rankLabel(t) + name + " (pid " + strconv.FormatInt(p, 10) + ")", sort: pid}
			for _, th := range t.Threads { // sorted by (pid, tid) after Finalize
				if th.PID != p {
					continue
				}
				tn := th.Name
				if tn == "" {
					tn = "thread " + strconv.FormatInt(th.TID, 10)
				}
				pm.threads = append(pm.threads, threadMeta{tid: th.TID, name: tn})
			}
			tl.procs = append(tl.procs, pm)
		}
		if hostCounters {
			tl.counterPid = lay.next
			lay.next++
			tl.procs = append(tl.procs, procMeta{pid: tl.counterPid, name: rankLabel(t) + "host counters", sort: tl.counterPid})
		}
		lay.traces = append(lay.traces, tl)
	}
	return lay
}

func (e *encoder) meta(pid int, tid int64, name, key string, value string, sortIdx *int) {
	e.begin("M", pid, tid)
	e.str("name", name)
	e.args()
	if sortIdx != nil {
		e.argInt(key, int64(*sortIdx))
	} else {
		e.argStr(key, value)
	}
	e.closeArgs()
	e.end()
}

func (e *encoder) metadata(lay *setLayout) {
	for i := range lay.traces {
		for _, p := range lay.traces[i].procs {
			e.meta(p.pid, 0, "process_name", "name", p.name, nil)
			s := p.sort
			e.meta(p.pid, 0, "process_sort_index", "sort_index", "", &s)
			for _, th := range p.threads {
				e.meta(p.pid, th.tid, "thread_name", "name", th.name, nil)
				if th.tid >= math.MinInt32 && th.tid <= math.MaxInt32 {
					idx := int(th.tid)
					e.meta(p.pid, th.tid, "thread_sort_index", "sort_index", "", &idx)
				}
			}
		}
	}
}

// collKey finds the collective record of a communication kernel.
type collKey struct {
	dev    model.DeviceID
	stream model.StreamID
	corr   int64
}

func (e *encoder) kernels(t *model.Trace, tl *traceLayout) {
	colls := map[collKey]int{}
	for i := range t.Collectives {
		c := &t.Collectives[i]
		if c.Source == model.CollFromKernel && c.Correlation != 0 {
			k := collKey{c.Device, c.Stream, c.Correlation}
			if _, dup := colls[k]; !dup {
				colls[k] = i
			}
		}
	}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		st, en := int64(k.Start)+tl.off, int64(k.End)+tl.off
		if !e.in(st, en) {
			continue
		}
		lc := t.LaunchConfig(k)
		e.slice(tl.devPid[k.Device], int64(lc.Stream), t.Str(k.Name), "kernel", st, en, false)
		e.args()
		e.argInt("device", int64(k.Device))
		e.argInt("stream", int64(lc.Stream))
		if k.Correlation != 0 {
			e.argInt("correlation", k.Correlation)
		}
		if k.ExternalID != 0 {
			e.argInt("external_id", k.ExternalID)
		}
		if lc.GraphID != 0 {
			e.argInt("graph_id", lc.GraphID)
		}
		e.launchArgs(lc)
		if ci, ok := colls[collKey{k.Device, lc.Stream, k.Correlation}]; ok && k.Correlation != 0 {
			c := &t.Collectives[ci]
			e.argStr("collective", c.Op.String())
			if c.Bytes >= 0 {
				e.argInt("bytes", c.Bytes)
			}
			if g := t.Str(c.Group); g != "" {
				e.argStr("group", g)
			}
			if c.GroupSize > 0 {
				e.argInt("group_size", int64(c.GroupSize))
			}
			if c.Seq >= 0 {
				e.argInt("seq", c.Seq)
			}
			if d := t.Str(c.Dtype); d != "" {
				e.argStr("dtype", d)
			}
		}
		e.closeArgs()
		e.end()
	}
}

func (e *encoder) memops(t *model.Trace, tl *traceLayout) {
	for i := range t.MemOps {
		m := &t.MemOps[i]
		st, en := int64(m.Start)+tl.off, int64(m.End)+tl.off
		if !e.in(st, en) {
			continue
		}
		name := t.Str(m.Name)
		if name == "" {
			name = "Memcpy " + m.Kind.String()
		}
		cat := "memcpy"
		if m.Kind == model.MemSet {
			cat = "memset"
		}
		e.slice(tl.devPid[m.Device], int64(m.Stream), name, cat, st, en, false)
		e.args()
		e.argStr("kind", m.Kind.String())
		if m.Bytes >= 0 {
			e.argInt("bytes", m.Bytes)
		}
		e.argStr("src", m.Src.String())
		e.argStr("dst", m.Dst.String())
		if m.Correlation != 0 {
			e.argInt("correlation", m.Correlation)
		}
		e.closeArgs()
		e.end()
	}
}

func (e *encoder) apiCalls(t *model.Trace, tl *traceLayout) {
	for i := range t.APICalls {
		a := &t.APICalls[i]
		st, en := int64(a.Start)+tl.off, int64(a.End)+tl.off
		if a.Thread == model.NoThread || !e.in(st, en) {
			continue
		}
		th := t.Thread(a.Thread)
		e.slice(tl.hostPid[th.PID], th.TID, t.Str(t.CallName(a)), "cuda_"+t.CallSource(a).String(), st, en, false)
		e.args()
		e.argStr("class", t.CallClass(a).String())
		if a.Correlation != 0 {
			e.argInt("correlation", a.Correlation)
		}
		if a.ExternalID != 0 {
			e.argInt("external_id", a.ExternalID)
		}
		e.closeArgs()
		e.end()
	}
}

func (e *encoder) ranges(t *model.Trace, tl *traceLayout) {
	for i := range t.Ranges {
		r := &t.Ranges[i]
		st, en := int64(r.Start)+tl.off, int64(r.End)+tl.off
		if !e.in(st, en) {
			continue
		}
		var pid int
		var tid int64
		tr := t.RangeTrack(r)
		switch {
		case r.Thread != model.NoThread:
			th := t.Thread(r.Thread)
			pid, tid = tl.hostPid[th.PID], th.TID
		case tr.Device != model.NoDevice:
			pid, tid = tl.devPid[tr.Device], int64(tr.Stream)
		default:
			continue // a range on no lane cannot be drawn
		}
		e.slice(pid, tid, t.Str(r.Name), r.Kind.String(), st, en, r.Kind == model.RangeMark)
		e.args()
		if d := t.Str(tr.Domain); d != "" {
			e.argStr("domain", d)
		}
		if r.ExternalID != 0 {
			e.argInt("external_id", r.ExternalID)
		}
		e.closeArgs()
		e.end()
	}
}

func (e *encoder) counters(t *model.Trace, tl *traceLayout) {
	if len(t.Samples) == 0 {
		return
	}
	// With a window, each series also gets its last sample before the window
	// so that its value at the window's start is known.
	before := make([]int, len(t.Counters))
	for i := range before {
		before[i] = -1
	}
	if e.win != nil {
		for i := range t.Samples {
			s := &t.Samples[i]
			if int64(s.Time)+tl.off >= int64(e.win.Start) {
				break
			}
			if s.Series >= 0 && int(s.Series) < len(before) {
				before[s.Series] = i
			}
		}
	}
	for i := range t.Samples {
		s := &t.Samples[i]
		if s.Series < 0 || int(s.Series) >= len(t.Counters) || math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			continue
		}
		ts := int64(s.Time) + tl.off
		if !e.in(ts, ts) && before[s.Series] != i {
			continue
		}
		c := &t.Counters[s.Series]
		pid := tl.counterPid
		if c.Device != model.NoDevice {
			pid = tl.devPid[c.Device]
		}
		name := t.Str(c.Name)
		if u := t.Str(c.Unit); u != "" {
			name += " (" + u + ")"
		}
		e.begin("C", pid, 0)
		e.ts("ts", ts)
		e.str("name", name)
		e.args()
		e.argSep()
		e.b = append(e.b, `"value":`...)
		e.b = strconv.AppendFloat(e.b, s.Value, 'g', -1, 64)
		e.closeArgs()
		e.end()
	}
}

// flows links each API call to the kernels and memory operations it issued.
func (e *encoder) flows(t *model.Trace, tl *traceLayout) {
	type key struct {
		scope int32
		corr  int64
	}
	calls := map[key]int{}
	for i := range t.APICalls {
		a := &t.APICalls[i]
		if a.Correlation == 0 || a.Thread == model.NoThread {
			continue
		}
		k := key{t.CallScope(a), a.Correlation}
		if _, ok := calls[k]; !ok {
			calls[k] = i
		}
	}
	if len(calls) == 0 {
		return
	}
	link := func(scope int32, corr int64, dev model.DeviceID, stream model.StreamID, start, end model.Time) {
		if corr == 0 {
			return
		}
		ai, ok := calls[key{scope, corr}]
		if !ok {
			return
		}
		a := &t.APICalls[ai]
		ast, aen := int64(a.Start)+tl.off, int64(a.End)+tl.off
		st, en := int64(start)+tl.off, int64(end)+tl.off
		if !e.in(ast, aen) || !e.in(st, en) {
			return
		}
		e.flowID++
		th := t.Thread(a.Thread)
		e.begin("s", tl.hostPid[th.PID], th.TID)
		e.ts("ts", ast)
		e.int("id", e.flowID)
		e.str("name", "launch")
		e.str("cat", "launch")
		e.end()
		e.begin("f", tl.devPid[dev], int64(stream))
		e.ts("ts", st)
		e.int("id", e.flowID)
		e.str("name", "launch")
		e.str("cat", "launch")
		e.str("bp", "e")
		e.end()
	}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		link(k.CorrScope, k.Correlation, k.Device, t.KernelStream(k), k.Start, k.End)
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		link(m.CorrScope, m.Correlation, m.Device, m.Stream, m.Start, m.End)
	}
}
