package html

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// rankTime is one rank's GPU time summed over its devices.
type rankTime struct {
	rank                         int
	span, compute, nonComp, idle model.Duration
	exposed                      model.Duration // comm-wait's exposed communication (0 when it reported none)
	exposedKnown                 bool
}

// rankTimes sums the device summaries per rank and adds the exposed
// communication that comm-wait measured (it reports it per device when it
// is at least 1% of the span).
func rankTimes(r *model.Report) []rankTime {
	byRank := map[int]*rankTime{}
	var order []int
	for _, d := range r.Devices {
		if d.Rank == model.NoRank {
			continue
		}
		rt := byRank[d.Rank]
		if rt == nil {
			rt = &rankTime{rank: d.Rank}
			byRank[d.Rank] = rt
			order = append(order, d.Rank)
		}
		rt.span += d.Span
		rt.compute += d.Compute
		rt.nonComp += d.NonCompute
		rt.idle += d.Idle
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		m, ok := f.Metric("exposed_comm_ns")
		if f.Rule != "comm-wait" || !ok || len(f.Evidence) == 0 {
			continue
		}
		if rt := byRank[f.Evidence[0].Rank]; rt != nil {
			rt.exposed += model.Duration(m.Value)
			rt.exposedKnown = true
		}
	}
	sort.Ints(order)
	out := make([]rankTime, 0, len(order))
	for _, k := range order {
		rt := byRank[k]
		rt.exposed = min(rt.exposed, rt.nonComp)
		out = append(out, *rt)
	}
	return out
}

// lateness returns comm-wait's straggler metrics: mean lateness per rank at
// matched collectives (rank → ns), and the straggler's rank (-1 = none).
func lateness(r *model.Report) (map[int]model.Duration, int) {
	for i := range r.Findings {
		f := &r.Findings[i]
		st, ok := f.Metric("straggler_rank")
		if f.Rule != "comm-wait" || !ok {
			continue
		}
		late := map[int]model.Duration{}
		for _, m := range f.Metrics {
			rest, ok := strings.CutPrefix(m.Name, "rank")
			if !ok {
				continue
			}
			num, ok := strings.CutSuffix(rest, "_mean_lateness_ns")
			if !ok {
				continue
			}
			if k, err := strconv.Atoi(num); err == nil {
				late[k] = model.Duration(m.Value)
			}
		}
		return late, int(st.Value)
	}
	return nil, -1
}

// writeRanks draws, for a job of several ranks, each rank's computation,
// exposed communication, other non-overlapped work and idle time, and each
// rank's mean lateness at matched collectives when comm-wait measured it.
func writeRanks(p *page, r *model.Report) {
	rts := rankTimes(r)
	if len(rts) < 2 {
		return
	}
	p.f("<h2 id=\"ranks\">Ranks</h2>\n")
	p.f("<p>Each bar is one rank's GPU span (summed over its devices): computation, communication not overlapped by computation (exposed, as the comm-wait rule measured it; under 1%% of the span it is not reported and falls in \"other\"), other work not overlapped by computation (copies, sets, unreported communication), then idle time.</p>\n")
	var rows []hbar
	var mx float64
	for _, rt := range rts {
		mx = max(mx, float64(rt.span))
	}
	for _, rt := range rts {
		other := rt.nonComp - rt.exposed
		val := fmt.Sprintf("exposed %.1f%%, idle %.1f%% of %s", pct(rt.exposed, rt.span), pct(rt.idle, rt.span), rt.span)
		if !rt.exposedKnown {
			val = fmt.Sprintf("exposed < 1%%, idle %.1f%% of %s", pct(rt.idle, rt.span), rt.span)
		}
		rows = append(rows, hbar{label: fmt.Sprintf("rank %d", rt.rank), value: val, segs: []seg{
			{v: float64(rt.compute), class: cCompute, tip: fmt.Sprintf("rank %d computation %s (%.1f%%)", rt.rank, rt.compute, pct(rt.compute, rt.span))},
			{v: float64(rt.exposed), class: cComm, tip: fmt.Sprintf("rank %d exposed communication %s (%.1f%%)", rt.rank, rt.exposed, pct(rt.exposed, rt.span))},
			{v: float64(other), class: cMemory, tip: fmt.Sprintf("rank %d other non-overlapped work %s (%.1f%%)", rt.rank, other, pct(other, rt.span))},
			{v: float64(rt.idle), class: cIdle, tip: fmt.Sprintf("rank %d idle %s (%.1f%%)", rt.rank, rt.idle, pct(rt.idle, rt.span))},
		}})
	}
	p.f("%s\n", hbars("Per-rank time: computation, exposed communication, other, idle", rows, mx,
		[]seg{{class: cCompute, label: "computation"}, {class: cComm, label: "exposed communication"}, {class: cMemory, label: "other non-overlapped"}, {class: cIdle, label: "idle"}}))

	late, strag := lateness(r)
	if len(late) == 0 {
		return
	}
	ranks := make([]int, 0, len(late))
	var lmax float64
	for k, v := range late {
		ranks = append(ranks, k)
		lmax = max(lmax, float64(v))
	}
	sort.Ints(ranks)
	rows = rows[:0]
	for _, k := range ranks {
		cl, note := cCompute, ""
		if k == strag {
			cl, note = "c-sync", " (straggler)"
		}
		rows = append(rows, hbar{label: fmt.Sprintf("rank %d", k), value: late[k].String() + note,
			segs: []seg{{v: float64(late[k]), class: cl, tip: fmt.Sprintf("rank %d mean lateness %s%s", k, late[k], note)}}})
	}
	p.f("<p>Mean lateness at the collectives matched across ranks (time after the earliest rank arrived), from the comm-wait rule: the straggler keeps the others waiting.</p>\n")
	p.f("%s\n", hbars("Per-rank lateness at matched collectives", rows, lmax, []seg{{class: cCompute, label: "mean lateness"}, {class: "c-sync", label: "straggler"}}))
}
