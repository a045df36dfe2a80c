package model

import (
	"math"
	"sort"
)

// checkJobLog checks a job / engine log: counts, line numbers in file
// order, numbers either -1 (not printed) or in range, fractions in 0..1
// (KV usage may exceed 1 only by rounding of a printed percentage).
func (v *validator) checkJobLog() {
	j := v.t.JobLog
	if j == nil {
		return
	}
	if j.Known < 0 || j.Known > j.Lines || j.Dropped < 0 || j.StatsStride < 0 || j.WorldSize < 0 {
		v.fail("joblog: counts lines=%d known=%d dropped=%d stride=%d world=%d inconsistent", j.Lines, j.Known, j.Dropped, j.StatsStride, j.WorldSize)
	}
	if !sort.StringsAreSorted(j.Sources) || !sort.IntsAreSorted(j.Ranks) {
		v.fail("joblog: sources or ranks not sorted")
	}
	line := func(what string, i, n, prev int) int {
		// Line is a physical line number; Lines counts logical lines
		// (wrapped lines joined), so it bounds nothing.
		if n < 1 || n < prev {
			v.fail("joblog.%s[%d]: line %d not positive or out of file order", what, i, n)
		}
		return n
	}
	tm := func(what string, i int, t Time, has bool) {
		if has && !ValidTime(t) {
			v.fail("joblog.%s[%d]: time %d out of range", what, i, t)
		}
	}
	prev := 0
	for i, s := range j.Stats {
		prev = line("stats", i, s.Line, prev)
		tm("stats", i, s.Time, s.HasTime)
		for _, f := range []float64{s.PromptTPS, s.GenTPS} {
			if !unknownOr(f, math.MaxFloat64) {
				v.fail("joblog.stats[%d]: throughput %v invalid", i, f)
			}
		}
		for _, f := range []float64{s.KVUsage, s.PrefixHit} {
			if !unknownOr(f, 1.01) {
				v.fail("joblog.stats[%d]: fraction %v outside 0..1", i, f)
			}
		}
		if s.Running < -1 || s.Waiting < -1 || s.Swapped < -1 || s.Tokens < -1 || s.NewTokens < -1 || s.CachedTokens < -1 {
			v.fail("joblog.stats[%d]: count below -1", i)
		}
	}
	prev = 0
	for i, s := range j.Spec {
		prev = line("spec", i, s.Line, prev)
		tm("spec", i, s.Time, s.HasTime)
		if !unknownOr(s.AcceptRate, 1.01) || !unknownOr(s.MeanAcceptLen, math.MaxFloat64) || s.Accepted < -1 || s.Drafted < -1 || s.NumSpecTokens < -1 {
			v.fail("joblog.spec[%d]: acceptance numbers invalid", i)
		}
	}
	prev = 0
	for i, e := range j.Events {
		prev = line("events", i, e.Line, prev)
		tm("events", i, e.Time, e.HasTime)
		if e.Kind == "" || e.Count < -1 || e.TriedBytes < -1 || e.CapacityBytes < -1 || e.FreeBytes < -1 || e.AllocatedBytes < -1 ||
			e.ReservedBytes < -1 || e.Bytes < -1 || !unknownOr(e.Seconds, math.MaxFloat64) {
			v.fail("joblog.events[%d]: kind %q or numbers invalid", i, e.Kind)
		}
	}
	for i, c := range j.Capacity {
		if c.Line < 1 || c.GPUBlocks < -1 || c.KVTokens < -1 || c.KVMemoryBytes < -1 || c.MaxNumSeqs < -1 ||
			!unknownOr(c.MaxConcurrency, math.MaxFloat64) || !unknownOr(c.GPUMemUtil, 1.01) || !unknownOr(c.InitSeconds, math.MaxFloat64) {
			v.fail("joblog.capacity[%d]: numbers invalid", i)
		}
	}
	prev = 0
	for i, r := range j.Requests {
		prev = line("requests", i, r.Line, prev)
		tm("requests", i, r.Time, r.HasTime)
		for _, f := range []float64{r.Total, r.Validation, r.Queue, r.Inference, r.TimePerToken} {
			if !unknownOr(f, math.MaxFloat64) {
				v.fail("joblog.requests[%d]: time %v invalid", i, f)
			}
		}
	}
	prev = 0
	for i, w := range j.Watchdog {
		prev = line("watchdog", i, w.Line, prev)
		tm("watchdog", i, w.Time, w.HasTime)
	}
}

// unknownOr reports whether f is -1 (not printed) or finite in [0, hi].
func unknownOr(f, hi float64) bool {
	return f == -1 || f >= 0 && f <= hi && !math.IsNaN(f)
}
