package model

import (
	"errors"
	"fmt"
	"math"
)

// MaxTime and MinTime bound every Time of a valid trace (about ±146 years
// around the clock's zero): the difference of any two valid times fits in
// an int64, so spans, gaps and durations computed from them never
// overflow. Importers drop records outside the bounds with a warning.
const (
	MaxTime Time = 1<<62 - 1
	MinTime Time = -MaxTime
)

// ValidTime reports whether t lies within [MinTime, MaxTime].
func ValidTime(t Time) bool { return t >= MinTime && t <= MaxTime }

// ValidSpan reports whether [start, end] is a span Validate accepts: both
// ends valid times and end not before start.
func ValidSpan(start, end Time) bool { return ValidTime(start) && ValidTime(end) && end >= start }

// maxValidateErrors bounds how many problems Validate reports.
const maxValidateErrors = 20

// Validate checks the trace's invariants: every record ends at or after its
// start, tables are sorted by start, references (threads, strings, devices,
// counter series, call chains) point at existing entries and enums hold known
// values. It returns nil or an error listing up to 20 problems.
func (t *Trace) Validate() error {
	v := validator{t: t}
	v.check()
	if len(v.errs) == 0 {
		return nil
	}
	if v.more > 0 {
		v.errs = append(v.errs, fmt.Errorf("... and %d more problems", v.more))
	}
	return errors.Join(v.errs...)
}

type validator struct {
	t    *Trace
	errs []error
	more int
}

func (v *validator) fail(format string, args ...any) {
	if len(v.errs) >= maxValidateErrors {
		v.more++
		return
	}
	v.errs = append(v.errs, fmt.Errorf(format, args...))
}

func (v *validator) str(table string, i int, id StringID) {
	if int(id) >= v.t.Strings.Len() {
		v.fail("%s[%d]: string id %d out of range", table, i, id)
	}
}

func (v *validator) thread(table string, i int, id ThreadID, required bool) {
	if id == NoThread {
		if required {
			v.fail("%s[%d]: no thread", table, i)
		}
		return
	}
	if id < 0 || int(id) >= len(v.t.Threads) {
		v.fail("%s[%d]: thread id %d out of range", table, i, id)
	}
}

func (v *validator) span(table string, i int, start, end, prev Time) {
	switch {
	case !ValidTime(start) || !ValidTime(end):
		v.fail("%s[%d]: time out of range (start %d, end %d; limit ±%d)", table, i, start, end, MaxTime)
	case end < start:
		v.fail("%s[%d]: ends (%d) before it starts (%d): negative duration", table, i, end, start)
	}
	if i > 0 && start < prev {
		v.fail("%s[%d]: not sorted by start (%d after %d)", table, i, start, prev)
	}
}

func (v *validator) check() {
	t := v.t
	devs := map[DeviceID]bool{}
	for i, d := range t.Devices {
		if devs[d.ID] {
			v.fail("devices[%d]: duplicate device id %d", i, d.ID)
		}
		devs[d.ID] = true
	}
	dev := func(table string, i int, id DeviceID) {
		if !devs[id] {
			v.fail("%s[%d]: device %d not in the device table", table, i, id)
		}
	}
	seenThreads := map[[2]int64]bool{}
	for i, th := range t.Threads {
		k := [2]int64{th.PID, th.TID}
		if seenThreads[k] {
			v.fail("threads[%d]: duplicate thread pid %d tid %d", i, th.PID, th.TID)
		}
		seenThreads[k] = true
	}
	for i, c := range t.Configs.vals {
		v.str("configs", i, c.ShortName)
	}
	for i, rt := range t.RangeTracks.vals {
		v.str("range tracks", i, rt.Domain)
	}
	var prev Time
	for i := range t.Kernels {
		k := &t.Kernels[i]
		v.span("kernels", i, k.Start, k.End, prev)
		prev = k.Start
		v.str("kernels", i, k.Name)
		if int(k.Config) >= t.Configs.Len() {
			v.fail("kernels[%d]: launch configuration %d out of range", i, k.Config)
		}
		dev("kernels", i, k.Device)
		if k.Name == NoString {
			v.fail("kernels[%d]: no name", i)
		}
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		v.span("memops", i, m.Start, m.End, prev)
		prev = m.Start
		v.str("memops", i, m.Name)
		dev("memops", i, m.Device)
		if m.Kind > MemSet {
			v.fail("memops[%d]: invalid kind %d", i, m.Kind)
		}
		if m.Bytes < -1 {
			v.fail("memops[%d]: negative byte count %d", i, m.Bytes)
		}
	}
	for i := range t.APICalls {
		a := &t.APICalls[i]
		v.span("api", i, a.Start, a.End, prev)
		prev = a.Start
		if int(a.Ident) >= t.APIIdents.Len() {
			v.fail("api[%d]: API identity %d out of range", i, a.Ident)
		}
		id := t.APIIdents.at(a.Ident)
		v.str("api", i, id.Name)
		v.thread("api", i, a.Thread, true)
		if id.Class > APIMemset {
			v.fail("api[%d]: invalid class %d", i, id.Class)
		}
	}
	for i := range t.Syncs {
		s := &t.Syncs[i]
		v.span("syncs", i, s.Start, s.End, prev)
		prev = s.Start
		if s.Device != NoDevice {
			dev("syncs", i, s.Device)
		}
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		v.span("ranges", i, r.Start, r.End, prev)
		prev = r.Start
		v.str("ranges", i, r.Name)
		if int(r.Track) >= t.RangeTracks.Len() {
			v.fail("ranges[%d]: track %d out of range", i, r.Track)
		}
		if r.Kind == RangeGPUAnnotation {
			dev("ranges", i, t.RangeTrack(r).Device)
		} else {
			v.thread("ranges", i, r.Thread, true)
		}
		if r.Kind > RangeMark {
			v.fail("ranges[%d]: invalid kind %d", i, r.Kind)
		}
		if r.Depth < 0 {
			v.fail("ranges[%d]: negative depth", i)
		}
	}
	prev = v.checkHost()
	for i := range t.Collectives {
		c := &t.Collectives[i]
		v.span("collectives", i, c.Start, c.End, prev)
		prev = c.Start
		v.str("collectives", i, c.Dtype)
		v.str("collectives", i, c.Group)
		if c.Op > CollScatter {
			v.fail("collectives[%d]: invalid op %d", i, c.Op)
		}
		if c.Source == CollFromKernel {
			dev("collectives", i, c.Device)
		}
	}
	v.checkSeries()
	for i := range t.OpShapes {
		o := &t.OpShapes[i]
		v.str("opshapes", i, o.Name)
		if o.ExternalID <= 0 || i > 0 && t.OpShapes[i-1].ExternalID > o.ExternalID {
			v.fail("opshapes[%d]: external id %d is not positive or out of order", i, o.ExternalID)
		}
	}
	if !ValidSpan(t.Capture.Start, t.Capture.End) {
		v.fail("capture window [%d, %d] is negative or out of range", t.Capture.Start, t.Capture.End)
	}
	if !ValidTime(t.Clock.Origin) {
		v.fail("clock origin %d out of range", t.Clock.Origin)
	}
	v.checkBench()
	v.checkJobLog()
}

// checkSeries checks counters, their samples and memory events.
func (v *validator) checkSeries() {
	t := v.t
	var prev Time
	for i, c := range t.Counters {
		v.str("counters", i, c.Name)
		v.str("counters", i, c.Unit)
	}
	for i := range t.Samples {
		s := &t.Samples[i]
		if i > 0 && s.Time < prev {
			v.fail("samples[%d]: not sorted by time", i)
		}
		if !ValidTime(s.Time) {
			v.fail("samples[%d]: time %d out of range", i, s.Time)
		}
		prev = s.Time
		if s.Series < 0 || int(s.Series) >= len(t.Counters) {
			v.fail("samples[%d]: series %d out of range", i, s.Series)
		}
	}
	for i := range t.MemEvents {
		m := &t.MemEvents[i]
		if i > 0 && m.Time < prev {
			v.fail("memory[%d]: not sorted by time", i)
		}
		if !ValidTime(m.Time) {
			v.fail("memory[%d]: time %d out of range", i, m.Time)
		}
		prev = m.Time
		v.thread("memory", i, m.Thread, false)
	}
}

// checkHost checks the OS runtime calls, call chains and GIL intervals,
// returning the last start seen.
func (v *validator) checkHost() Time {
	t := v.t
	var prev Time
	for i := range t.OSCalls {
		o := &t.OSCalls[i]
		v.span("osrt", i, o.Start, o.End, prev)
		prev = o.Start
		v.str("osrt", i, o.Name)
		v.thread("osrt", i, o.Thread, true)
		if o.CallChain < -1 || int(o.CallChain) >= len(t.CallChains) {
			v.fail("osrt[%d]: call chain %d out of range", i, o.CallChain)
		}
	}
	for i, c := range t.CallChains {
		for _, f := range c {
			v.str("callchains", i, f)
		}
	}
	for i := range t.GIL {
		g := &t.GIL[i]
		v.span("gil", i, g.Start, g.End, prev)
		prev = g.Start
		v.thread("gil", i, g.Thread, true)
	}
	return prev
}

// checkBench checks a benchmark log's runs, rows and failures.
func (v *validator) checkBench() {
	t := v.t
	if t.Bench == nil {
		return
	}
	for i, r := range t.Bench.Runs {
		for j, row := range r.Rows {
			if row.SizeBytes < 0 {
				v.fail("bench[%d].rows[%d]: negative size", i, j)
			}
			if row.Count < 0 {
				v.fail("bench[%d].rows[%d]: negative count", i, j)
			}
			for _, h := range [2]BenchResult{row.OutOfPlace, row.InPlace} {
				if !h.Present {
					continue
				}
				if !benchNum(h.TimeUS) || !benchNum(h.AlgBWGBps) || !benchNum(h.BusBWGBps) {
					v.fail("bench[%d].rows[%d]: time or bandwidth negative or not finite", i, j)
				}
				if h.Wrong < -1 {
					v.fail("bench[%d].rows[%d]: #wrong %d below -1", i, j, h.Wrong)
				}
				if (h.MaxDelta < 0 && h.MaxDelta != -1) || math.IsNaN(h.MaxDelta) {
					v.fail("bench[%d].rows[%d]: error column %v invalid", i, j, h.MaxDelta)
				}
			}
		}
		if r.Ranks < 0 || r.Nodes < 0 {
			v.fail("bench[%d]: negative ranks or nodes", i)
		}
		if r.OOBValues < -1 {
			v.fail("bench[%d]: out-of-bounds count %d below -1", i, r.OOBValues)
		}
		for j, d := range r.Devices {
			if d.Rank < 0 || d.Device < 0 {
				v.fail("bench[%d].devices[%d]: negative rank or device", i, j)
			}
		}
	}
	for i, f := range t.Bench.Failures {
		if f.Run < -1 || f.Run >= len(t.Bench.Runs) {
			v.fail("bench.failures[%d]: run %d out of range", i, f.Run)
		}
	}
	for i, tu := range t.Bench.NCCL.TransportUse {
		if i > 0 && t.Bench.NCCL.TransportUse[i-1].Name >= tu.Name {
			v.fail("bench.nccl.transports[%d]: not sorted or duplicated", i)
		}
	}
}

// benchNum reports whether a benchmark number is finite and not negative.
func benchNum(f float64) bool { return f >= 0 && !math.IsInf(f, 0) }
