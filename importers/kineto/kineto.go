package kineto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

type importer struct{}

// New returns the Kineto importer.
func New() importers.Importer { return importer{} }

func (importer) Format() model.Format { return model.FormatKineto }

// Sniff scores a head of a file: a JSON object or array whose first bytes
// show Kineto / Chrome-trace keys.
func (importer) Sniff(head []byte) int {
	h := bytes.TrimLeft(head, " \t\r\n\xef\xbb\xbf")
	if len(h) == 0 || (h[0] != '{' && h[0] != '[') {
		return 0
	}
	switch {
	case bytes.Contains(h, []byte(`"traceEvents"`)) || bytes.Contains(h, []byte(`"schemaVersion"`)):
		return 90
	case bytes.Contains(h, []byte(`"deviceProperties"`)) || bytes.Contains(h, []byte(`"distributedInfo"`)):
		return 80
	case bytes.Contains(h, []byte(`"ph"`)):
		if h[0] == '[' {
			return 70
		}
		return 50
	}
	// Any other JSON object or array of objects: Kineto is the only JSON
	// format we read, and harness-written files can put large objects before
	// traceEvents. ("[0] NCCL INFO ..." log lines also start with '['.)
	if h[0] == '[' {
		rest := bytes.TrimLeft(h[1:], " \t\r\n")
		if len(rest) > 0 && rest[0] != '{' && rest[0] != ']' {
			return 0
		}
	}
	return 10
}

// Import reads a Kineto trace file (plain or gzip). Gzip input is inflated
// in a separate goroutine that feeds the parser large buffers.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*model.Trace, error) {
	rc, gz, err := importers.Open(path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	var r io.Reader = rc
	if gz {
		ar := newAsyncReader(rc)
		defer ar.Close()
		r = ar
	}
	return parse(ctx, r, path, opts)
}

// Parse reads a Kineto trace from r; name is used for the trace's path, for
// positions in errors and for the rank fallback from the file name.
func Parse(r io.Reader, name string, opts importers.Options) (*model.Trace, error) {
	return parse(context.Background(), r, name, opts)
}

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

// devProps is one entry of deviceProperties.
type devProps struct {
	ID                         int64  `json:"id"`
	Name                       string `json:"name"`
	TotalGlobalMem             int64  `json:"totalGlobalMem"`
	ComputeMajor, ComputeMinor int32
	NumSms                     int32 `json:"numSms"`
}

type parser struct {
	t       *model.Trace
	w       *importers.Warner
	ctx     context.Context
	scratch []byte

	nEvents int
	base    int64
	hasBase bool
	minTS   int64
	haveTS  bool

	threadCache   laneKey
	threadCacheID model.ThreadID
	haveThread    bool
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

	flows []flow

	procName   map[int64]string
	threadName map[laneKey]string

	props     []devProps
	window    model.Interval
	hasWindow bool
	unknown   map[string]int
	profRange int
	schema    string
	haveRank  bool
	ev        event
	par       parCfg

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

const (
	eventsPerCtxCheck = 1 << 16
	maxUnknownCats    = 64
)

func parse(ctx context.Context, rd io.Reader, path string, opts importers.Options) (t *model.Trace, err error) {
	return parseWith(ctx, rd, path, opts, defaultPar())
}

func parseWith(ctx context.Context, rd io.Reader, path string, opts importers.Options, par parCfg) (t *model.Trace, err error) {
	t = model.NewTrace(path, model.FormatKineto)
	p := &parser{
		par:        par,
		t:          t,
		w:          importers.NewWarner(t, opts),
		ctx:        ctx,
		synth:      map[string]int64{},
		memCache:   map[model.StringID][3]uint8{},
		devSeen:    map[model.DeviceID]bool{},
		accelDevs:  map[model.DeviceID]bool{},
		procName:   map[int64]string{},
		threadName: map[laneKey]string{},
		unknown:    map[string]int{},
	}
	r := newReader(rd)
	if err := p.top(r); err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, importers.Errorf(path, fmt.Sprintf("byte %d", se.off), "%s", se.msg)
		}
		var ie *importers.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, importers.Errorf(path, "", "%v", err)
	}
	p.finish()
	return t, nil
}

// top reads the top-level value: an object with traceEvents or a bare array.
func (p *parser) top(r *reader) error {
	c, ok := r.peek()
	if !ok {
		if r.rerr != nil {
			return r.eofErr()
		}
		return &syntaxError{off: 0, msg: "empty input"}
	}
	if c == 0xEF { // UTF-8 BOM
		if r.end-r.pos >= 3 && bytes.HasPrefix(r.buf[r.pos:r.end], []byte("\xef\xbb\xbf")) {
			r.pos += 3
			c, ok = r.peek()
			if !ok {
				return &syntaxError{off: 3, msg: "empty input"}
			}
		}
	}
	switch c {
	case '[':
		if err := p.events(r); err != nil {
			return err
		}
	case '{':
		if err := p.object(r); err != nil {
			return err
		}
	default:
		return r.errAt(0, "not JSON: expected '{' or '[' at the top level, found %q", c)
	}
	if r.ws() {
		return r.errAt(0, "unexpected data after the top-level value")
	}
	if r.rerr != nil {
		return r.eofErr()
	}
	return nil
}

func (p *parser) object(r *reader) error {
	r.pos++ // '{'
	c, ok := r.peek()
	if !ok {
		return r.eofErr()
	}
	if c == '}' {
		r.pos++
		return nil
	}
	for {
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		if c != '"' {
			return r.errAt(0, "expected a key string, found %q", c)
		}
		n, err := r.extent()
		if err != nil {
			return err
		}
		kc := cur{b: r.buf[r.pos : r.pos+n], off: r.offset(0)}
		kraw, esc, err := kc.str()
		if err != nil {
			return err
		}
		key := string(kraw)
		if esc {
			key = string(unescape(nil, kraw))
		}
		r.pos += n
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		if c != ':' {
			return r.errAt(0, "expected ':' after key %q, found %q", key, c)
		}
		r.pos++
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		if key == "traceEvents" && c == '[' {
			if err := p.events(r); err != nil {
				return err
			}
		} else {
			n, err := r.extent()
			if err != nil {
				return err
			}
			vc := cur{b: r.buf[r.pos : r.pos+n], off: r.offset(0)}
			if err := p.header(key, &vc); err != nil {
				return err
			}
			r.pos += n
		}
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		switch c {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return nil
		default:
			return r.errAt(0, "expected ',' or '}' after a top-level value, found %q", c)
		}
	}
}

// events reads the traceEvents array (r at '[').
func (p *parser) events(r *reader) error {
	r.pos++
	c, ok := r.peek()
	if !ok {
		return r.eofErr()
	}
	if c == ']' {
		r.pos++
		return nil
	}
	// seqFrom is where the sequential loop took over; the pipeline starts
	// once it has read p.par.min bytes of events from there.
	seqFrom, seqEvents := r.offset(0), p.nEvents
	par := p.par.enabled()
	seqMin := p.par.min
	for {
		// (At least one element between two runs of the pipeline: it
		// hands back at the element it could not take.)
		if par && r.offset(0)-seqFrom >= seqMin && p.nEvents > seqEvents {
			bpe := (r.offset(0) - seqFrom) / int64(max(1, p.nEvents-seqEvents))
			if err := p.parallelEvents(r, bpe); err != nil {
				return err
			}
			seqFrom, seqEvents = r.offset(0), p.nEvents
			// After a hand-back, read at least what the pipeline held
			// before starting it again (each start copies that much).
			seqMin = max(p.par.min, 2*int64(p.par.batch)*int64(p.par.inflight))
		}
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		start := r.offset(0)
		idx := p.nEvents
		p.nEvents++
		var n int
		if c == '{' {
			// Parse straight from the buffer; an event cut by the buffer's
			// end fails near that end, and is parsed again after a refill.
			for {
				cc := cur{b: r.buf[r.pos:r.end], off: start}
				err := p.parseEvent(&cc, &p.ev)
				if err == nil {
					n = cc.i
					break
				}
				if cc.i+8 >= len(cc.b) {
					// Read at least as much again (64 KiB or more), so that
					// tiny reads cannot make re-parsing quadratic.
					if r.fillAtLeast(max(len(cc.b), 64<<10)) {
						continue
					}
					if cc.i >= len(cc.b) {
						return r.eofErr()
					}
				}
				return err
			}
			p.handle(&p.ev, idx, start)
		} else {
			var err error
			if n, err = r.extent(); err != nil {
				return err
			}
			cc := cur{b: r.buf[r.pos : r.pos+n], off: start}
			if err := cc.skip(); err != nil {
				return err
			}
			if cc.i != len(cc.b) {
				return cc.fail("unexpected data after value")
			}
			p.warn(idx, start, "not an object; skipped")
		}
		r.pos += n
		if idx%eventsPerCtxCheck == 0 && p.ctx != nil {
			if err := p.ctx.Err(); err != nil {
				return err
			}
		}
		if c, ok = r.peek(); !ok {
			return r.eofErr()
		}
		switch c {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return nil
		default:
			return r.errAt(0, "expected ',' or ']' in traceEvents, found %q", c)
		}
	}
}

func (p *parser) warn(idx int, off int64, format string, args ...any) {
	p.w.Warn(fmt.Sprintf("event %d (byte %d)", idx, off), format, args...)
}

// header handles one top-level key other than traceEvents.
func (p *parser) header(key string, c *cur) error {
	t := p.t
	switch key {
	case "deviceProperties", "computeProperties":
		if c.next() != '[' {
			return c.skip()
		}
		var raw []map[string]json.RawMessage
		if err := json.Unmarshal(c.b, &raw); err != nil {
			// Checked for grammar below; a wrong shape is only a warning.
			if err := c.skip(); err != nil {
				return err
			}
			p.w.Warn("header", "%s: unexpected shape: %v", key, err)
			return nil
		}
		for _, m := range raw {
			var d devProps
			d.ID = jsonInt(m["id"])
			_ = json.Unmarshal(m["name"], &d.Name)
			d.TotalGlobalMem = jsonInt(m["totalGlobalMem"])
			d.ComputeMajor = int32(jsonInt(m["computeMajor"]))
			d.ComputeMinor = int32(jsonInt(m["computeMinor"]))
			if _, ok := m["computeMajor"]; !ok { // 2021 computeProperties
				d.ComputeMajor = int32(jsonInt(m["major"]))
				d.ComputeMinor = int32(jsonInt(m["minor"]))
			}
			d.NumSms = int32(jsonInt(m["numSms"]))
			if d.NumSms == 0 {
				d.NumSms = int32(jsonInt(m["multiProcessorCount"]))
			}
			p.props = append(p.props, d)
		}
		c.i = len(c.b)
		return nil
	case "distributedInfo":
		if c.next() != '{' {
			return c.skip()
		}
		var di struct {
			Backend   json.RawMessage              `json:"backend"`
			Rank      json.RawMessage              `json:"rank"`
			WorldSize json.RawMessage              `json:"world_size"`
			PGCount   json.RawMessage              `json:"pg_count"`
			NCCL      json.RawMessage              `json:"nccl_version"`
			PGConfig  []map[string]json.RawMessage `json:"pg_config"`
		}
		if err := json.Unmarshal(c.b, &di); err != nil {
			if err := c.skip(); err != nil {
				return err
			}
			p.w.Warn("header", "distributedInfo: unexpected shape: %v", err)
			return nil
		}
		if len(di.Rank) > 0 {
			if v, ok := parseInt(di.Rank); ok && v >= 0 && v < 1<<31 {
				t.Rank = int(v)
				p.haveRank = true
			}
		}
		if v, ok := parseInt(di.WorldSize); ok && v > 0 && v < 1<<31 {
			t.WorldSize = int(v)
		}
		if s := jsonScalar(di.Backend); s != "" {
			t.Meta["backend"] = s
		}
		if s := jsonScalar(di.NCCL); s != "" {
			t.Meta["nccl_version"] = s
		}
		if s := jsonScalar(di.PGCount); s != "" {
			t.Meta["pg_count"] = s
		}
		if len(di.PGConfig) > 0 {
			var parts []string
			for i, pg := range di.PGConfig {
				if i == 16 {
					parts = append(parts, fmt.Sprintf("... %d more", len(di.PGConfig)-16))
					break
				}
				name := jsonScalar(pg["pg_name"])
				desc := jsonScalar(pg["pg_desc"])
				if desc == "" {
					desc = jsonScalar(pg["uid"])
				}
				parts = append(parts, fmt.Sprintf("%s:%s:%s", name, desc, jsonScalar(pg["pg_size"])))
			}
			t.Meta["pg_config"] = strings.Join(parts, ",")
		}
		c.i = len(c.b)
		return nil
	case "baseTimeNanoseconds":
		var b []byte
		switch ch := c.next(); {
		case ch == '-' || (ch >= '0' && ch <= '9'):
			var err error
			if b, err = c.number(); err != nil {
				return err
			}
		case ch == '"':
			raw, _, err := c.str()
			if err != nil {
				return err
			}
			b = raw
		default:
			if err := c.skip(); err != nil {
				return err
			}
			p.w.Warn("header", "baseTimeNanoseconds is not a number; ignored")
			return nil
		}
		v, ok := parseInt(b)
		if !ok || bytes.ContainsAny(b, ".eE") {
			p.w.Warn("header", "baseTimeNanoseconds %q is not an integer; ignored", b)
			return nil
		}
		p.base, p.hasBase = v, true
		t.Meta["baseTimeNanoseconds"] = strconv.FormatInt(v, 10)
		return nil
	case "schemaVersion", "cupti_version", "cuda_runtime_version", "cuda_driver_version",
		"hip_runtime_version", "hip_driver_version", "roctracer_version":
		switch ch := c.next(); {
		case ch == '-' || (ch >= '0' && ch <= '9'):
			b, err := c.number()
			if err != nil {
				return err
			}
			t.Meta[key] = string(b)
		case ch == '"':
			raw, _, err := c.str()
			if err != nil {
				return err
			}
			t.Meta[key] = string(raw)
		default:
			return c.skip()
		}
		if key == "schemaVersion" {
			p.schema = t.Meta[key]
		}
		return nil
	}
	return c.skip()
}

func jsonInt(m json.RawMessage) int64 {
	v, _ := parseInt(bytes.TrimSpace(m))
	return v
}

// jsonScalar renders a JSON string or number as text ("" otherwise).
func jsonScalar(m json.RawMessage) string {
	m = bytes.TrimSpace(m)
	if len(m) == 0 {
		return ""
	}
	if m[0] == '"' {
		var s string
		if json.Unmarshal(m, &s) == nil {
			return s
		}
		return ""
	}
	if m[0] == '-' || (m[0] >= '0' && m[0] <= '9') {
		return string(m)
	}
	return ""
}

// laneInt turns a pid/tid into a number: ints as they are, decimal strings
// ("2662278912") and "stream 7" to their number, other strings ("Spans",
// "") to stable synthetic ids above 2^40.
func (p *parser) laneInt(l *laneVal) (int64, bool) {
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
		if id, ok := p.synth[string(l.s)]; ok {
			return id, false
		}
		id := int64(1<<40) + int64(len(p.synth))
		p.synth[string(l.s)] = id
		return id, false
	}
	return 0, false
}

func (p *parser) thread(ev *event) model.ThreadID {
	pid, _ := p.laneInt(&ev.pid)
	tid, tidNum := p.laneInt(&ev.tid)
	k := laneKey{pid, tid}
	if p.haveThread && k == p.threadCache {
		return p.threadCacheID
	}
	id := p.t.ThreadFor(pid, tid)
	if !tidNum && ev.tid.kind == lnStr && p.t.Threads[id].Name == "" {
		p.t.Threads[id].Name = string(ev.tid.s)
	}
	p.threadCache, p.threadCacheID, p.haveThread = k, id, true
	return id
}

func (p *parser) device(d model.DeviceID) {
	if p.haveLastDev && d == p.lastDev {
		return
	}
	if !p.devSeen[d] {
		p.devSeen[d] = true
		p.t.EnsureDevice(d)
	}
	p.lastDev, p.haveLastDev = d, true
}

// gpuLane returns the device and stream of a GPU-side event.
func (p *parser) gpuLane(ev *event) (model.DeviceID, model.StreamID) {
	a := &ev.a
	var dev int64
	if a.hasDevice {
		dev = a.device
	} else {
		dev, _ = p.laneInt(&ev.pid)
	}
	var st int64
	switch {
	case a.hasStream:
		st = a.stream
	case a.hasStreamID: // MTIA
		st = a.streamID
	default:
		st, _ = p.laneInt(&ev.tid)
	}
	if dev < -1 || dev > 1<<20 {
		dev = -1
	}
	return model.DeviceID(dev), model.StreamID(st)
}

func (p *parser) apiClass(id model.StringID) model.APIClass {
	if int(id) < len(p.classCache) && p.classCache[id] != 0 {
		return model.APIClass(p.classCache[id] - 1)
	}
	for int(id) >= len(p.classCache) {
		p.classCache = append(p.classCache, 0)
	}
	c := model.ClassifyAPI(p.t.Str(id))
	p.classCache[id] = uint8(c) + 1
	return c
}

func (p *parser) isComm(id model.StringID) bool {
	if int(id) < len(p.commCache) && p.commCache[id] != 0 {
		return p.commCache[id] == 2
	}
	for int(id) >= len(p.commCache) {
		p.commCache = append(p.commCache, 0)
	}
	v := uint8(1)
	if model.IsCommKernelName(p.t.Str(id)) {
		v = 2
	}
	p.commCache[id] = v
	return v == 2
}

// times converts ts/dur; ok is false (with a warning) for a spoiled record.
func (p *parser) times(ev *event, idx int, off int64, needDur bool) (start, end int64, ok bool) {
	if ev.tsStr {
		p.warn(idx, off, "ts is not a number; skipped")
		return 0, 0, false
	}
	if ev.ts == nil {
		p.warn(idx, off, "missing ts; skipped")
		return 0, 0, false
	}
	s, good := parseNs(ev.ts)
	if !good {
		p.warn(idx, off, "bad ts %q; skipped", ev.ts)
		return 0, 0, false
	}
	var d int64
	if needDur {
		if ev.durStr {
			p.warn(idx, off, "dur is not a number; skipped")
			return 0, 0, false
		}
		if ev.dur == nil {
			p.warn(idx, off, "missing dur; skipped")
			return 0, 0, false
		}
		d, good = parseNs(ev.dur)
		if !good {
			p.warn(idx, off, "bad dur %q; skipped", ev.dur)
			return 0, 0, false
		}
		if d < 0 {
			p.warn(idx, off, "negative dur %s; skipped", ev.dur)
			return 0, 0, false
		}
		if s > 0 && d > 1<<62-s {
			p.warn(idx, off, "dur %s overflows; skipped", ev.dur)
			return 0, 0, false
		}
	}
	if s < -(1<<62) || s > 1<<62 {
		p.warn(idx, off, "ts %s out of range; skipped", ev.ts)
		return 0, 0, false
	}
	if !p.haveTS || s < p.minTS {
		p.minTS, p.haveTS = s, true
	}
	return s, s + d, true
}

// handle turns one parsed event into model records.
func (p *parser) handle(ev *event, idx int, off int64) {
	t := p.t
	if ev.badType != "" {
		p.warn(idx, off, "field %q has the wrong type; skipped", ev.badType)
		return
	}
	if ev.phLen == 0 {
		p.warn(idx, off, "missing ph; skipped")
		return
	}
	cat := catNone
	if ev.hasCat {
		cat = categorize(ev.cat)
	}
	if ev.phLen != 1 {
		p.warn(idx, off, "unknown ph; skipped")
		return
	}
	switch ev.ph {
	case 'X':
	case 'M':
		p.meta(ev)
		return
	case 'i', 'I':
		if string(ev.name) == "[memory]" {
			p.memory(ev, idx, off)
		}
		return
	case 's', 'f', 't':
		if cat == catFlow && ev.hasID {
			s, ok := parseNs(ev.ts)
			if !ok {
				p.warn(idx, off, "bad ts on flow; skipped")
				return
			}
			pid, _ := p.laneInt(&ev.pid)
			tid, _ := p.laneInt(&ev.tid)
			p.flowT.add(flow{pid: pid, tid: tid, ts: s, id: ev.id, start: ev.ph == 's'})
		}
		return
	default:
		p.warn(idx, off, "unsupported ph %q; skipped", ev.ph)
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
		if _, ok := p.unknown[name]; ok || len(p.unknown) < maxUnknownCats {
			p.unknown[name]++
		}
		return
	}
	start, end, ok := p.times(ev, idx, off, true)
	if !ok {
		return
	}
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
		th := p.thread(ev)
		p.ranges.add(model.Range{Start: model.Time(start), End: model.Time(end), ExternalID: a.ext,
			Name: name, Thread: th, Stream: model.NoStream, Device: model.NoDevice, Kind: kind})
		if cat == catCPUOp && string(ev.name) == "record_param_comms" &&
			(a.hasCollName || a.hasNelems || a.hasPGName || a.hasPGID || a.hasGroupSize) {
			p.collective(ev, start, end, model.NoDevice, model.NoStream, model.CollFromCPU, name)
		}
	case catGPUUser, catProfilerRange:
		dev, st := p.gpuLane(ev)
		if dev < 0 {
			p.warn(idx, off, "GPU annotation without a device; skipped")
			return
		}
		p.device(dev)
		if cat == catProfilerRange {
			p.profRange++
		}
		p.ranges.add(model.Range{Start: model.Time(start), End: model.Time(end), ExternalID: a.ext,
			Name: name, Thread: model.NoThread, Stream: st, Device: dev, Kind: model.RangeGPUAnnotation})
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
				p.hipSeen = true
			case bytes.HasPrefix(ev.name, []byte("cuda")):
				p.cudaSeen = true
			}
		}
		p.apis.add(model.APICall{Start: model.Time(start), End: model.Time(end), Correlation: a.corr,
			ExternalID: a.ext, Name: name, Thread: p.thread(ev), Class: p.apiClass(name), Source: src})
	case catKernel, catAccelKernel:
		dev, st := p.gpuLane(ev)
		if dev < 0 {
			p.warn(idx, off, "kernel without a device; skipped")
			return
		}
		p.device(dev)
		if cat == catAccelKernel {
			if !p.accelDevs[dev] {
				p.accelDevs[dev] = true
			}
		} else if !p.rocmKernel && string(a.kind) == "Dispatch Kernel" {
			p.rocmKernel = true
		}
		if name == model.NoString {
			name = t.Intern("(unnamed kernel)")
		}
		p.kernels.add(model.Kernel{Start: model.Time(start), End: model.Time(end), Correlation: a.corr,
			ExternalID: a.ext, GraphID: a.graphID, Stream: st, Name: name, Device: dev, Grid: a.grid, Block: a.block,
			Registers: clamp32(a.regs), SharedMem: clamp32(a.smem)})
		if cat == catKernel && p.isComm(name) {
			p.collective(ev, start, end, dev, st, model.CollFromKernel, name)
		}
	case catMemcpy, catMemset:
		dev, st := p.gpuLane(ev)
		if dev < 0 {
			p.warn(idx, off, "memory operation without a device; skipped")
			return
		}
		p.device(dev)
		kind, src, dst := p.memKind(name, cat == catMemset, a.kind)
		bytesN := int64(-1)
		if a.hasBytes && a.bytes >= 0 {
			bytesN = a.bytes
		}
		p.memOps.add(model.MemOp{Start: model.Time(start), End: model.Time(end), Correlation: a.corr,
			ExternalID: a.ext, Bytes: bytesN, Stream: st, Name: name, Device: dev, Kind: kind, Src: src, Dst: dst})
	case catSync:
		dev, st := p.gpuLane(ev)
		if st == 4294967295 || st < 0 {
			st = model.NoStream
		}
		if dev < 0 {
			dev = model.NoDevice
		} else {
			p.device(dev)
		}
		p.syncs.add(model.SyncEvent{Start: model.Time(start), End: model.Time(end), Correlation: a.corr,
			Stream: st, Device: dev, Kind: syncKind(ev.name, a.syncKind)})
	case catTrace:
		iv := model.Interval{Start: model.Time(start), End: model.Time(end)}
		if !p.hasWindow {
			p.window, p.hasWindow = iv, true
		} else {
			p.window.Start = min(p.window.Start, iv.Start)
			p.window.End = max(p.window.End, iv.End)
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
func (p *parser) memKind(name model.StringID, set bool, argKind []byte) (model.MemOpKind, model.MemKind, model.MemKind) {
	if v, ok := p.memCache[name]; ok && len(argKind) == 0 {
		return model.MemOpKind(v[0]), model.MemKind(v[1]), model.MemKind(v[2])
	}
	n := p.t.Str(name)
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
		if a, b, ok := strings.Cut(inner, "->"); ok {
			src = memKinds[strings.ToLower(strings.TrimSpace(a))]
			dst = memKinds[strings.ToLower(strings.TrimSpace(b))]
		} else {
			dst = memKinds[strings.ToLower(strings.TrimSpace(inner))]
		}
	}
	if len(argKind) == 0 {
		p.memCache[name] = [3]uint8{uint8(kind), uint8(src), uint8(dst)}
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

func (p *parser) collective(ev *event, start, end int64, dev model.DeviceID, st model.StreamID, src model.CollSource, name model.StringID) {
	t := p.t
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
	p.colls.add(model.Collective{Start: model.Time(start), End: model.Time(end), Bytes: bytesN, Seq: -1,
		Correlation: a.corr, ExternalID: a.ext, Stream: st, Dtype: t.Strings.InternBytes(a.dtype), Group: group, Device: dev,
		GroupSize: gs, Rank: rank, Op: op, Source: src})
}

func (p *parser) memory(ev *event, idx int, off int64) {
	start, _, ok := p.times(ev, idx, off, false)
	if !ok {
		return
	}
	a := &ev.a
	dev := model.NoDevice
	if a.hasDevType && a.devType != 0 && a.hasDevID && a.devID >= 0 && a.devID < 1<<20 {
		dev = model.DeviceID(a.devID)
		p.device(dev)
	}
	alloc, res := int64(-1), int64(-1)
	if a.hasTotalAlloc {
		alloc = a.totalAlloc
	}
	if a.hasTotalRes {
		res = a.totalRes
	}
	p.memEvents.add(model.MemEvent{Time: model.Time(start), Bytes: a.memBytes, Addr: uint64(a.addr),
		TotalAllocated: alloc, TotalReserved: res, Thread: p.thread(ev), Device: dev})
}

func (p *parser) meta(ev *event) {
	if ev.pid.kind != lnInt && !(ev.pid.kind == lnStr && isDigits(ev.pid.s)) {
		return
	}
	pid, _ := p.laneInt(&ev.pid)
	a := &ev.a
	switch string(ev.name) {
	case "process_name":
		if _, ok := p.procName[pid]; !ok && a.hasMName {
			p.procName[pid] = string(a.mName)
		}
	case "thread_name":
		tid, _ := p.laneInt(&ev.tid)
		k := laneKey{pid, tid}
		if _, ok := p.threadName[k]; !ok && a.hasMName {
			p.threadName[k] = string(a.mName)
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

var rankInName = regexp.MustCompile(`(?i)(?:^|[^a-z])rank[-_]?(\d{1,6})(?:[^0-9]|$)`)

// RankFromName returns the rank a file name states ("rank-3", "rank3",
// "rank_3", "_rank0.") or NoRank.
func RankFromName(path string) int {
	m := rankInName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return model.NoRank
	}
	v, err := strconv.Atoi(m[1])
	if err != nil {
		return model.NoRank
	}
	return v
}

// finish completes the trace after the last byte: flow fallback, base
// time, devices, names, rank, notes, Finalize.
func (p *parser) finish() {
	t := p.t
	// Join the chunked tables, the large ones in parallel (each is a
	// fresh allocation filled once, mostly page faults and copying).
	var wg sync.WaitGroup
	wg.Go(func() { t.Ranges = p.ranges.flush(t.Ranges) })
	wg.Go(func() { t.APICalls = p.apis.flush(t.APICalls) })
	wg.Go(func() { t.Kernels = p.kernels.flush(t.Kernels) })
	wg.Go(func() { p.flows = p.flowT.flush(p.flows) })
	t.MemOps = p.memOps.flush(t.MemOps)
	t.Syncs = p.syncs.flush(t.Syncs)
	t.Collectives = p.colls.flush(t.Collectives)
	t.MemEvents = p.memEvents.flush(t.MemEvents)
	wg.Wait()
	p.linkFlows()
	p.relinkExternalIDs()
	if p.hasBase {
		b := model.Time(p.base)
		for i := range t.Kernels {
			t.Kernels[i].Start += b
			t.Kernels[i].End += b
		}
		for i := range t.MemOps {
			t.MemOps[i].Start += b
			t.MemOps[i].End += b
		}
		for i := range t.APICalls {
			t.APICalls[i].Start += b
			t.APICalls[i].End += b
		}
		for i := range t.Syncs {
			t.Syncs[i].Start += b
			t.Syncs[i].End += b
		}
		for i := range t.Ranges {
			t.Ranges[i].Start += b
			t.Ranges[i].End += b
		}
		for i := range t.Collectives {
			t.Collectives[i].Start += b
			t.Collectives[i].End += b
		}
		for i := range t.MemEvents {
			t.MemEvents[i].Time += b
		}
		if p.hasWindow {
			p.window.Start += b
			p.window.End += b
		}
	}
	// Kineto writes epoch µs, or µs relative to an epoch base.
	t.Clock.EpochKnown = p.hasBase || (p.haveTS && p.minTS > 1e17)
	if p.hasWindow {
		t.Capture = p.window
	}

	// Devices: those with activity, described by deviceProperties.
	vendor := ""
	switch {
	case p.hipSeen || p.rocmKernel || t.Meta["hip_runtime_version"] != "" || t.Meta["roctracer_version"] != "":
		vendor = "AMD"
	case p.cudaSeen || t.Meta["cuda_runtime_version"] != "" || t.Meta["cupti_version"] != "":
		vendor = "NVIDIA"
	}
	for i := range t.Devices {
		d := &t.Devices[i]
		for _, pr := range p.props {
			if pr.ID == int64(d.ID) {
				d.Name = pr.Name
				d.MemoryBytes = pr.TotalGlobalMem
				d.ComputeMajor, d.ComputeMinor = pr.ComputeMajor, pr.ComputeMinor
				d.SMs = pr.NumSms
				break
			}
		}
		if p.accelDevs[d.ID] {
			d.Kind = model.DeviceAccel
			d.Vendor = "Meta"
			if d.Name == "" {
				d.Name = "MTIA"
			}
			continue
		}
		d.Vendor = vendorOf(d.Name, vendor)
	}

	// Processes and thread names.
	pids := map[int64]bool{}
	for _, th := range t.Threads {
		pids[th.PID] = true
	}
	for pid := range pids {
		if pid >= 1<<40 {
			continue
		}
		t.Processes = append(t.Processes, model.Process{PID: pid, Name: p.procName[pid]})
	}
	for i := range t.Threads {
		th := &t.Threads[i]
		if n, ok := p.threadName[laneKey{th.PID, th.TID}]; ok {
			th.Name = n
		}
	}

	// Rank.
	if !p.haveRank {
		t.Rank = RankFromName(t.Path)
	}
	for i := range t.Collectives {
		if t.Collectives[i].Rank == model.NoRank && t.Rank >= 0 {
			t.Collectives[i].Rank = int32(t.Rank)
		}
	}

	// Producer.
	prod := "PyTorch Profiler (Kineto)"
	var extra []string
	if p.schema != "" {
		extra = append(extra, "schema "+p.schema)
	}
	if v := t.Meta["cuda_runtime_version"]; v != "" {
		extra = append(extra, "CUDA runtime "+v)
	}
	if v := t.Meta["hip_runtime_version"]; v != "" {
		extra = append(extra, "HIP runtime "+v)
	}
	if len(extra) > 0 {
		prod += " " + strings.Join(extra, ", ")
	}
	t.Producer = prod

	// Notes.
	accelOnly := len(p.accelDevs) > 0
	for _, d := range t.Devices {
		if !p.accelDevs[d.ID] {
			accelOnly = false
		}
	}
	if len(t.Kernels) == 0 && len(t.MemOps) == 0 && len(t.Syncs) == 0 && len(p.accelDevs) == 0 {
		if p.profRange > 0 {
			t.Caps.Note(fmt.Sprintf("CUPTI range-profiler trace: %d per-kernel cuda_profiler_range records kept as GPU annotations; no kernel events", p.profRange))
		} else {
			t.Caps.Note("CPU-only trace: no GPU activity was recorded")
		}
	}
	if len(p.accelDevs) > 0 {
		t.Caps.Note("MTIA trace: device activity is on a non-GPU accelerator (Meta MTIA)")
		if accelOnly {
			t.Caps.Add(model.CapAccelOnly)
		}
	}
	if len(p.unknown) > 0 {
		names := make([]string, 0, len(p.unknown))
		for n := range p.unknown {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p.w.Warn("-", "%d complete events of unknown category %q ignored", p.unknown[n], n)
		}
	}
	p.w.Flush()
	t.Finalize()
}

func vendorOf(name, fallback string) string {
	n := strings.ToLower(name)
	switch {
	case strings.Contains(n, "amd") || strings.Contains(n, "radeon") || strings.Contains(n, "instinct") || strings.HasPrefix(n, "mi"):
		return "AMD"
	case strings.Contains(n, "nvidia") || strings.Contains(n, "tesla") || strings.Contains(n, "geforce") ||
		strings.Contains(n, "quadro") || strings.Contains(n, "rtx") || strings.Contains(n, "h100") ||
		strings.Contains(n, "a100") || strings.Contains(n, "h800") || strings.Contains(n, "b200") || strings.Contains(n, "h200"):
		return "NVIDIA"
	}
	return fallback
}

// linkFlows fills missing correlations from ac2g flows: a GPU op without
// args.correlation takes the id of the f flow at its (device, stream, ts), an
// API call the id of the s flow at its (pid, tid, ts).
func (p *parser) linkFlows() {
	t := p.t
	if len(p.flows) == 0 {
		return
	}
	needGPU, needAPI := false, false
	for i := range t.Kernels {
		if t.Kernels[i].Correlation == 0 {
			needGPU = true
			break
		}
	}
	for i := range t.MemOps {
		if t.MemOps[i].Correlation == 0 {
			needGPU = true
			break
		}
	}
	for i := range t.APICalls {
		if t.APICalls[i].Correlation == 0 && t.APICalls[i].Source != model.APIAccel {
			needAPI = true
			break
		}
	}
	if !needGPU && !needAPI {
		return
	}
	type key struct{ pid, tid, ts int64 }
	ends := map[key]int64{}
	starts := map[key]int64{}
	for _, f := range p.flows {
		k := key{f.pid, f.tid, f.ts}
		if f.start {
			if _, ok := starts[k]; !ok {
				starts[k] = f.id
			}
		} else if _, ok := ends[k]; !ok {
			ends[k] = f.id
		}
	}
	if needGPU {
		for i := range t.Kernels {
			k := &t.Kernels[i]
			if k.Correlation == 0 {
				k.Correlation = ends[key{int64(k.Device), int64(k.Stream), int64(k.Start)}]
			}
		}
		for i := range t.MemOps {
			m := &t.MemOps[i]
			if m.Correlation == 0 {
				m.Correlation = ends[key{int64(m.Device), int64(m.Stream), int64(m.Start)}]
			}
		}
	}
	if needGPU {
		for i := range t.Collectives {
			c := &t.Collectives[i]
			if c.Correlation == 0 && c.Source == model.CollFromKernel {
				c.Correlation = ends[key{int64(c.Device), int64(c.Stream), int64(c.Start)}]
			}
		}
	}
	if needAPI {
		for i := range t.APICalls {
			a := &t.APICalls[i]
			if a.Correlation == 0 {
				th := t.Thread(a.Thread)
				a.Correlation = starts[key{th.PID, th.TID, int64(a.Start)}]
			}
		}
	}
}

// table collects one table in chunks while the events are read, so that
// growing it never copies what it holds; flush makes it one slice of the
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

// flush appends the table to dst and empties it.
func (c *table[T]) flush(dst []T) []T {
	n := c.n + len(c.cur)
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
// call is not in the file).
func (p *parser) relinkExternalIDs() {
	t := p.t
	same, both := 0, 0
	count := func(ext, corr int64) {
		if ext != 0 && corr != 0 {
			both++
			if ext == corr {
				same++
			}
		}
	}
	for i := range t.Kernels {
		count(t.Kernels[i].ExternalID, t.Kernels[i].Correlation)
	}
	for i := range t.MemOps {
		count(t.MemOps[i].ExternalID, t.MemOps[i].Correlation)
	}
	if both == 0 || same*10 < both*9 {
		return
	}
	type item struct {
		start, end model.Time
		idx        int32
		api        bool
	}
	byThread := map[model.ThreadID][]item{}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind == model.RangeCPUOp && r.Thread != model.NoThread {
			byThread[r.Thread] = append(byThread[r.Thread], item{r.Start, r.End, int32(i), false})
		}
	}
	for i := range t.APICalls {
		a := &t.APICalls[i]
		if a.Source != model.APIAccel && (a.ExternalID == 0 || a.ExternalID == a.Correlation) {
			byThread[a.Thread] = append(byThread[a.Thread], item{a.Start, a.End, int32(i), true})
		}
	}
	threads := make([]model.ThreadID, 0, len(byThread))
	for th := range byThread {
		threads = append(threads, th)
	}
	slices.Sort(threads)
	var stack []item
	for _, th := range threads {
		items := byThread[th]
		slices.SortStableFunc(items, func(a, b item) int {
			switch {
			case a.start != b.start:
				return cmpTime(a.start, b.start)
			case a.api != b.api: // ops before calls at the same start
				if a.api {
					return 1
				}
				return -1
			default: // longer first
				return cmpTime(b.end, a.end)
			}
		})
		stack = stack[:0]
		for _, it := range items {
			for len(stack) > 0 && stack[len(stack)-1].end < it.start {
				stack = stack[:len(stack)-1]
			}
			if !it.api {
				stack = append(stack, it)
				continue
			}
			ext := int64(0)
			if len(stack) > 0 {
				ext = t.Ranges[stack[len(stack)-1].idx].ExternalID
			}
			t.APICalls[it.idx].ExternalID = ext
		}
	}
	extOf := make(map[int64]int64, len(t.APICalls))
	for i := range t.APICalls {
		if a := &t.APICalls[i]; a.Correlation != 0 && a.Source != model.APIAccel {
			extOf[a.Correlation] = a.ExternalID
		}
	}
	for i := range t.Kernels {
		if k := &t.Kernels[i]; k.ExternalID != 0 && k.ExternalID == k.Correlation {
			k.ExternalID = extOf[k.Correlation]
		}
	}
	for i := range t.MemOps {
		if m := &t.MemOps[i]; m.ExternalID != 0 && m.ExternalID == m.Correlation {
			m.ExternalID = extOf[m.Correlation]
		}
	}
	for i := range t.Collectives {
		if c := &t.Collectives[i]; c.Source == model.CollFromKernel && c.ExternalID != 0 && c.ExternalID == c.Correlation {
			c.ExternalID = extOf[c.Correlation]
		}
	}
	t.Caps.Note("GPU-side External ids were correlation ids (2022–23 build); re-derived from the cpu_op enclosing each runtime call")
}

func cmpTime(a, b model.Time) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
