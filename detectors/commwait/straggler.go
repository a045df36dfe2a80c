package commwait

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// stragglers matches collectives across ranks and names the straggler, from
// trustworthy matches only.
func stragglers(p *detectors.Pass) {
	traces := p.Set.Timelines()
	job := p.Set.Job()
	m := Match(traces)
	rankName := func(r int) string {
		if traces[r].Rank >= 0 {
			return fmt.Sprintf("rank %d", traces[r].Rank)
		}
		return traces[r].Path
	}
	need := int(p.Param("min_matched"))
	how := matchHow(m, job, traces)
	if len(m.Matches) < need+1 {
		p.NotMeasurable("stragglers: %s; need %d after the first (profiler-start skew) to compare arrivals", how, need)
		return
	}
	l := m.Arrivals()
	firstNote := ""
	if l.FirstLast >= 0 && l.First > 0 {
		firstNote = fmt.Sprintf(" The first matched collective after profiler start had an arrival spread of %s (%s last); that is profiler-start skew, not straggling, and is left out.", l.First, rankName(l.FirstLast))
	}
	strag := straggler(l, len(traces))
	n := l.N
	meanLate := l.Mean[strag]
	var others model.Duration
	for r := range traces {
		if r != strag {
			others += l.Mean[r]
		}
	}
	meanOthers := model.Duration(int64(others) / int64(len(traces)-1))
	if meanLate < model.Duration(p.Param("skew_info_us")*float64(model.Microsecond)) {
		// Ranks arrive together; only a first-collective skew is worth a note.
		if l.FirstLast >= 0 && l.First >= model.Duration(p.Param("skew_info_us")*float64(model.Microsecond)) {
			p.Report(firstSkewNote(p, m, l, traces, how, meanLate, rankName))
		}
		return
	}
	sev := model.SevInfo
	if meanLate >= model.Duration(p.Param("skew_warn_us")*float64(model.Microsecond)) {
		sev = model.SevWarning
	}
	st := traces[strag]
	partial := ""
	if job.WorldSize > job.Given() {
		partial = fmt.Sprintf(" Only %s were given: lateness is relative to these, and the job's real straggler may be a rank not given.", job.Describe())
	}
	f := model.Finding{
		Severity:   sev,
		Confidence: model.Inferred,
		Title:      fmt.Sprintf("Straggler: %s arrives %s late on average at %d matched collectives (%s)", rankName(strag), meanLate, n, job.Short()),
		Message: fmt.Sprintf("%s. %s arrived last at %d of %d collectives, on average %s after the earliest rank (other ranks: %s); the other ranks spent %s in total waiting for it.%s%s",
			how, rankName(strag), l.Last[strag], n, meanLate, meanOthers, l.WaitCaused[strag], firstNote, partial),
		Recommendation: fmt.Sprintf("Look at %s's own timeline (kernel-gap, gil-stall findings): host-side work, data loading or a slower GPU make it late; balance work across ranks.", rankName(strag)),
		Metrics: []model.Metric{
			{Name: "straggler_rank", Value: float64(st.Rank), Unit: "rank"},
			{Name: "matched_collectives", Value: float64(n), Unit: "count"},
			{Name: "rejected_matches", Value: float64(m.Rejected), Unit: "count"},
			{Name: "straggler_mean_lateness_ns", Value: float64(meanLate), Unit: "ns"},
			{Name: "others_mean_lateness_ns", Value: float64(meanOthers), Unit: "ns"},
			{Name: "straggler_last_count", Value: float64(l.Last[strag]), Unit: "count", Num: float64(l.Last[strag]), Den: float64(n)},
			{Name: "wait_caused_ns", Value: float64(l.WaitCaused[strag]), Unit: "ns"},
			{Name: "first_collective_skew_ns", Value: float64(l.First), Unit: "ns"},
		},
	}
	if 3*l.Last[strag] < 2*n {
		f.Message += " No single rank is always last: " + lastArrivals(l, rankName) + "."
	}
	if len(m.Mismatched) > 0 {
		sort.Strings(m.Mismatched)
		f.Message += fmt.Sprintf(" Collective counts differ between ranks (%s); %d collectives had no counterpart and were not compared.", strings.Join(uniq(m.Mismatched), "; "), m.Unpaired)
	}
	// One evidence item per rank: its latest arrival among the matches.
	f.Evidence = append(f.Evidence, lateEvidence(m, l, traces, rankName)...)
	addRankMetrics(&f, m, l, traces)
	p.Report(f)
}

// matchHow says how collectives were matched and clocks aligned, and how
// many candidate matches were rejected.
func matchHow(m *Matching, job model.Job, traces []*model.Trace) string {
	how := fmt.Sprintf("%d collectives matched across %s by process group, operation, size and %s", len(m.Matches), job.Describe(), m.By)
	if sharedClock(traces) {
		how += "; the ranks share one capture's clock"
	} else {
		how += "; clocks aligned per rank on the median difference of matched end times"
	}
	if m.Rejected > 0 {
		how += fmt.Sprintf("; %d candidate matches rejected because their intervals do not overlap once the clocks are aligned (a different operation, or a one-way transfer such as a small broadcast or send that completes into the peer's buffer without waiting for it: no arrival to compare)", m.Rejected)
	}
	return how
}

// straggler is the rank the others waited for longest (summed over the
// matches where it arrived last), then the latest on average.
func straggler(l Lateness, ranks int) int {
	strag := 0
	for r := 0; r < ranks; r++ {
		if l.WaitCaused[r] > l.WaitCaused[strag] || (l.WaitCaused[r] == l.WaitCaused[strag] && l.Mean[r] > l.Mean[strag]) {
			strag = r
		}
	}
	return strag
}

// firstSkewNote is the note when ranks arrive together except at the first
// collective after profiler start: skew that costs nothing.
func firstSkewNote(p *detectors.Pass, m *Matching, l Lateness, traces []*model.Trace, how string, meanLate model.Duration, rankName func(int) string) model.Finding {
	o := m.Matches[0][l.FirstLast]
	return model.Finding{
		Severity:   model.SevInfo,
		Confidence: model.Inferred,
		Title:      fmt.Sprintf("No straggler: ranks arrive together except at the first collective after profiler start (%s apart)", l.First),
		Message: fmt.Sprintf("%s. After the first, the latest rank is on average %s late (below %.0f µs). The first matched collective had an arrival spread of %s (%s last): the ranks' profilers started at different moments (profiler-start skew), which costs nothing outside the capture.",
			how, meanLate, p.Param("skew_info_us"), l.First, rankName(l.FirstLast)),
		Metrics: []model.Metric{
			{Name: "first_collective_skew_ns", Value: float64(l.First), Unit: "ns"},
			{Name: "matched_collectives", Value: float64(l.N), Unit: "count"},
			{Name: "max_mean_lateness_ns", Value: float64(meanLate), Unit: "ns"},
		},
		Evidence: []model.Evidence{{Rank: traces[l.FirstLast].Rank, Device: o.Device, Stream: o.Stream, Thread: -1, Start: o.Start, End: o.End,
			Note: fmt.Sprintf("first collective after profiler start: %s arrives %s after the earliest rank", rankName(l.FirstLast), l.First)}},
	}
}

// lateEvidence is one item per rank: its latest arrival among the matches
// after the first.
func lateEvidence(m *Matching, l Lateness, traces []*model.Trace, rankName func(int) string) []model.Evidence {
	n := l.N
	var ev []model.Evidence
	for r := range traces {
		worst, wi := model.Duration(-1), -1
		for i, c := range m.Matches[1:] {
			a := c[r].Start - model.Time(m.Offsets[r])
			if d := model.Duration(a - minStart(c, m.Offsets)); d > worst {
				worst, wi = d, i+1
			}
		}
		if wi < 0 {
			continue
		}
		o := m.Matches[wi][r]
		ev = append(ev, model.Evidence{Rank: traces[r].Rank, Device: o.Device, Stream: o.Stream, Thread: -1, Start: o.Start, End: o.End,
			Note: fmt.Sprintf("%s: mean lateness %s, last at %d/%d; latest here (%s, %s after the earliest rank)", rankName(r), l.Mean[r], l.Last[r], n, o.Op, worst)})
	}
	return ev
}

// addRankMetrics adds each rank's lateness, last count, wait caused and
// clock offset, and the ranks when they are known and distinct.
func addRankMetrics(f *model.Finding, m *Matching, l Lateness, traces []*model.Trace) {
	n := l.N
	for r := range traces {
		rk := traces[r].Rank
		f.Metrics = append(f.Metrics, model.Metric{Name: model.RankMetricName(rk, "mean_lateness_ns"), Value: float64(l.Mean[r]), Unit: "ns"},
			model.Metric{Name: model.RankMetricName(rk, "last_count"), Value: float64(l.Last[r]), Unit: "count", Num: float64(l.Last[r]), Den: float64(n)},
			model.Metric{Name: model.RankMetricName(rk, "wait_caused_ns"), Value: float64(l.WaitCaused[r]), Unit: "ns"},
			model.Metric{Name: model.RankMetricName(rk, "clock_offset_ns"), Value: float64(m.Offsets[r]), Unit: "ns"})
		if rk != model.NoRank {
			f.Ranks = append(f.Ranks, rk)
		}
	}
	sort.Ints(f.Ranks)
	if len(f.Ranks) != len(traces) {
		f.Ranks = nil // ranks unknown or repeated: no per-rank table
	}
}

// lastArrivals lists the ranks that arrived last at least once, most often first.
func lastArrivals(l Lateness, name func(int) string) string {
	var idx []int
	for r, c := range l.Last {
		if c > 0 {
			idx = append(idx, r)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return l.Last[idx[a]] > l.Last[idx[b]] })
	var parts []string
	for _, r := range idx {
		parts = append(parts, fmt.Sprintf("%s last at %d of %d (others waited %s)", name(r), l.Last[r], l.N, l.WaitCaused[r]))
	}
	return strings.Join(parts, ", ")
}
