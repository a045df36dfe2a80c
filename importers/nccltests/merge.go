package nccltests

import (
	"strconv"

	"github.com/tracedx/tracedx/model"
)

// A log may hold any number of runs: sweeps repeated for hours, or a
// benchmark loop printing the same table every minute. Keeping every row
// makes memory (and the report, with a finding per run) grow with the log,
// so past mergeAfter runs the parser keeps one run per distinct benchmark
// (same program, hosts, parameters and row sizes) whose rows aggregate the
// repeats (mean time and bandwidths, summed #wrong, largest error), and
// past maxRuns distinct runs or maxRows rows it drops further runs with one
// warning. Runs with failures, truncated runs and runs without a footer are
// never merged: the detectors report them one by one.
const (
	mergeAfter = 256
	maxRuns    = 2048
	maxRows    = 1 << 16
)

// merger holds the state of run merging.
type merger struct {
	on      bool           // past mergeAfter runs: repeats are merged
	keys    map[string]int // benchmark key → index in Bench.Runs
	rows    int            // rows kept in Bench.Runs
	merged  int            // runs merged into an earlier one
	dropped int            // runs dropped past maxRuns / maxRows
	dropRow int            // their rows
	failed  bool           // the open run has failure lines
	gone    bool           // the last closed run was merged or dropped
	first   int            // log line of the first merged or dropped run
	key     []byte         // scratch for runKey
}

// runKey appends to b what identifies a benchmark: two runs with the same
// key printed the same table (sizes, types, columns) for the same program on
// the same ranks. It is built without fmt: it runs once per run of the log.
func runKey(b []byte, r *model.BenchRun) []byte {
	str := func(s string) { b = append(strconv.AppendInt(b, int64(len(s)), 10), ':'); b = append(b, s...) }
	num := func(v int64) { b = append(strconv.AppendInt(b, v, 10), ',') }
	flag := func(v bool) { b = strconv.AppendBool(b, v) }
	str(r.Program)
	str(r.Collective)
	str(r.TestsVersion)
	str(r.GPU)
	for _, h := range r.Hosts {
		str(h)
	}
	b = append(b, '|')
	pr := r.Params
	for _, v := range []int64{int64(r.NCCLHeaders), int64(r.NCCLLibrary), int64(r.Ranks), int64(r.Nodes), int64(r.Processes), int64(r.AvgLines),
		int64(pr.NThread), int64(pr.NGpus), pr.MinBytes, pr.MaxBytes, pr.StepFactor, pr.StepBytes, int64(pr.WarmupIters), int64(pr.Iters),
		int64(pr.AggIters), int64(pr.Validation), int64(pr.Graph), int64(pr.NRanks)} {
		num(v)
	}
	for _, v := range []bool{r.ErrorColumn, r.TableHeader, r.Concluded, r.RanksInferred, r.OOBValues >= 0} {
		flag(v)
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		num(row.SizeBytes)
		num(row.Count)
		str(row.Dtype)
		str(row.Redop)
		num(int64(row.Root))
		flag(row.OutOfPlace.Present)
		flag(row.InPlace.Present)
	}
	return b
}

// mergeable reports whether a closed run may be folded into another.
func (m *merger) mergeable(r *model.BenchRun) bool { return !m.failed && complete(r) }

// complete says whether a run printed its rows and footer (a run without
// failure lines that says so may be merged).
func complete(r *model.BenchRun) bool { return r.Footer && !r.Truncated && len(r.Rows) > 0 }

// closed is called when run i (the last of b.Runs) is finished and derived.
func (m *merger) closed(b *model.Bench, i int) {
	m.gone = false
	r := &b.Runs[i]
	m.rows += len(r.Rows)
	if !m.on && len(b.Runs) > mergeAfter {
		m.on = true
		m.compact(b)
		return
	}
	if !m.on {
		return
	}
	m.place(b, i)
}

// place merges or drops run i (the last one) once merging is on.
func (m *merger) place(b *model.Bench, i int) {
	r := &b.Runs[i]
	if m.mergeable(r) {
		m.key = runKey(m.key[:0], r)
		if j, ok := m.keys[string(m.key)]; ok && j != i {
			mergeRun(&b.Runs[j], r)
			m.remove(b, i, false)
			return
		}
		if len(b.Runs) <= maxRuns && m.rows <= maxRows {
			m.keys[string(m.key)] = i
			return
		}
	}
	if len(b.Runs) > maxRuns || m.rows > maxRows {
		m.remove(b, i, true)
	}
}

// count takes run r out of the kept rows, as merged into another (drop
// false) or dropped, remembering the line of the first such run.
func (m *merger) count(r *model.BenchRun, drop bool) {
	if m.merged+m.dropped == 0 {
		m.first = r.Line
	}
	m.rows -= len(r.Rows)
	if drop {
		m.dropped++
		m.dropRow += len(r.Rows)
	} else {
		m.merged++
	}
}

// remove deletes the last run i, merged into another (drop false) or dropped.
func (m *merger) remove(b *model.Bench, i int, drop bool) {
	m.count(&b.Runs[i], drop)
	for f := len(b.Failures) - 1; f >= 0 && b.Failures[f].Run >= i; f-- {
		b.Failures[f].Run = -1
	}
	b.Runs[i] = model.BenchRun{}
	b.Runs = b.Runs[:i]
	m.gone = true
}

// compact merges the repeats among the runs read so far, keeping the first
// of each benchmark in its place, and renumbers the failures' runs.
func (m *merger) compact(b *model.Bench) {
	m.keys = map[string]int{}
	failed := map[int]bool{}
	for _, f := range b.Failures {
		if f.Run >= 0 {
			failed[f.Run] = true
		}
	}
	newIdx := make([]int, len(b.Runs))
	out := b.Runs[:0]
	for i := range b.Runs {
		r := b.Runs[i]
		if !failed[i] && complete(&r) {
			m.key = runKey(m.key[:0], &r)
			k := string(m.key)
			if j, ok := m.keys[k]; ok {
				mergeRun(&out[j], &r)
				newIdx[i] = -1
				m.count(&r, false)
				continue
			}
			m.keys[k] = len(out)
		}
		newIdx[i] = len(out)
		out = append(out, r)
	}
	for i := len(out); i < len(b.Runs); i++ {
		b.Runs[i] = model.BenchRun{}
	}
	b.Runs = out
	for f := range b.Failures {
		if run := b.Failures[f].Run; run >= 0 {
			b.Failures[f].Run = newIdx[run]
		}
	}
	if m.merged > 0 && len(out) > 0 {
		m.gone = newIdx[len(newIdx)-1] < 0
	}
}

// mergeRun folds run r into dst (same key): row values become the mean over
// the repeats, #wrong and out-of-bounds counts add up, failure flags stick.
func mergeRun(dst, r *model.BenchRun) {
	n := float64(dst.Repeats)
	if n < 1 {
		n = 1
	}
	mean := func(a, b float64) float64 { return (a*n + b) / (n + 1) }
	for i := range dst.Rows {
		d, s := &dst.Rows[i], &r.Rows[i]
		for _, h := range [2][2]*model.BenchResult{{&d.OutOfPlace, &s.OutOfPlace}, {&d.InPlace, &s.InPlace}} {
			a, b := h[0], h[1]
			a.TimeUS, a.AlgBWGBps, a.BusBWGBps = mean(a.TimeUS, b.TimeUS), mean(a.AlgBWGBps, b.AlgBWGBps), mean(a.BusBWGBps, b.BusBWGBps)
			switch {
			case a.Wrong < 0:
				a.Wrong = b.Wrong
			case b.Wrong > 0 && a.Wrong < 1<<62-b.Wrong:
				a.Wrong += b.Wrong
			}
			if b.MaxDelta > a.MaxDelta {
				a.MaxDelta = b.MaxDelta
			}
		}
	}
	if dst.ReportedAvgBusBW >= 0 && r.ReportedAvgBusBW >= 0 {
		dst.ReportedAvgBusBW = mean(dst.ReportedAvgBusBW, r.ReportedAvgBusBW)
	}
	if r.OOBValues > 0 && dst.OOBValues < 1<<62-r.OOBValues {
		dst.OOBValues += r.OOBValues
	}
	dst.OOBFailed = dst.OOBFailed || r.OOBFailed
	dst.AvgFailed = dst.AvgFailed || r.AvgFailed
	dst.Extras += r.Extras
	dst.Repeats = int(n) + 1
}

// warn reports what merging did, once, at the end of the log.
func (m *merger) warn(p *parser) {
	if m.merged > 0 {
		p.w.Warn(pos(m.first), "the log holds more than %d runs: %d repeated runs were merged into the first run of the same benchmark (rows hold the mean time and bandwidth of the repeats; BenchRun.Repeats counts them)", mergeAfter, m.merged)
	}
	if m.dropped > 0 {
		p.w.Warn(pos(m.first), "more than %d distinct runs or %d rows: %d further runs (%d rows) were not kept", maxRuns, maxRows, m.dropped, m.dropRow)
	}
}
