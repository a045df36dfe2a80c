package html

import (
	"fmt"
	"slices"
	"sort"

	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/model"
)

// writeDiffClasses draws the total kernel time per kernel class (the
// classes of model.ClassifyKernel, the breakdown's own), base vs candidate.
func writeDiffClasses(p *page, res *compare.Result) {
	if len(res.Kernels) == 0 {
		return
	}
	base, cand := map[model.KernelClass]model.Duration{}, map[model.KernelClass]model.Duration{}
	for _, k := range res.Kernels {
		c := model.ClassifyKernel(k.Name)
		base[c] += k.BaseTotal
		cand[c] += k.CandTotal
	}
	classes := []model.KernelClass{model.KernelCompute, model.KernelComm, model.KernelMemory}
	cls := map[model.KernelClass]string{model.KernelCompute: cCompute, model.KernelComm: cComm, model.KernelMemory: cMemory}
	var rows []hbar
	var mx float64
	for _, c := range classes {
		mx = max(mx, float64(base[c]), float64(cand[c]))
	}
	for _, c := range classes {
		if base[c] == 0 && cand[c] == 0 {
			continue
		}
		ch := ""
		if pc, ok := compare.Pct(base[c], cand[c], true); ok {
			ch = fmt.Sprintf(" (%+.1f%%)", pc)
		}
		rows = append(rows,
			hbar{label: c.String() + " (base)", value: base[c].String(), segs: []seg{{v: float64(base[c]), class: cIdle, tip: fmt.Sprintf("%s kernels, base: %s", c, base[c])}}},
			hbar{label: c.String() + " (candidate)", value: cand[c].String() + ch, segs: []seg{{v: float64(cand[c]), class: cls[c], tip: fmt.Sprintf("%s kernels, candidate: %s%s", c, cand[c], ch)}}})
	}
	p.f("<h2>Kernel time by class</h2>\n<p>Sum of kernel durations per class over every device (overlapping kernels counted each), base in grey.</p>\n")
	p.f("%s\n", hbars("Kernel time by class, base vs candidate", rows, mx, []seg{{class: cIdle, label: "base"}, {class: cCompute, label: "computation"}, {class: cComm, label: "communication"}, {class: cMemory, label: "memory"}}))
}

// stepKey is the n-th profiler step of a rank.
type stepKey struct{ rank, n int }

func stepsByKey(r *model.Report) map[stepKey]model.StepSummary {
	out := map[stepKey]model.StepSummary{}
	n := map[int]int{}
	for _, st := range r.Summary.Steps {
		out[stepKey{st.Rank, n[st.Rank]}] = st
		n[st.Rank]++
	}
	return out
}

// stepRanks lists the ranks that have steps, in order.
func stepRanks(r *model.Report) []int {
	var out []int
	for _, st := range r.Summary.Steps {
		if !slices.Contains(out, st.Rank) {
			out = append(out, st.Rank)
		}
	}
	slices.Sort(out)
	return out
}

// maxDiffSteps bounds the step pairs drawn.
const maxDiffSteps = 16

// writeDiffSteps draws each step that both sides have (the n-th step of a
// rank on each side), base above candidate, split into GPU busy and idle.
func writeDiffSteps(p *page, base, cand *model.Report) {
	if base == nil || cand == nil {
		return
	}
	bs, cs := stepsByKey(base), stepsByKey(cand)
	// Ranks pair by number when both sides have the same ranks, else by
	// order (comparing rank 0 of one run with rank 1 of another).
	br, cr := stepRanks(base), stepRanks(cand)
	if !slices.Equal(br, cr) {
		re := map[stepKey]model.StepSummary{}
		for k, st := range cs {
			if i := slices.Index(cr, k.rank); i < len(br) {
				re[stepKey{br[i], k.n}] = st
			}
		}
		cs = re
	}
	var keys []stepKey
	for k := range bs {
		if _, ok := cs[k]; ok {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].rank != keys[j].rank {
			return keys[i].rank < keys[j].rank
		}
		return keys[i].n < keys[j].n
	})
	more := len(keys) - maxDiffSteps
	keys = keys[:min(len(keys), maxDiffSteps)]
	var rows []hbar
	var mx float64
	for _, k := range keys {
		mx = max(mx, float64(bs[k].End-bs[k].Start), float64(cs[k].End-cs[k].Start))
	}
	for _, k := range keys {
		b, c := bs[k], cs[k]
		bd, cd := b.End.Sub(b.Start), c.End.Sub(c.Start)
		lbl := c.Name
		switch {
		case c.Rank != k.rank:
			lbl = fmt.Sprintf("rank %d/%d %s", k.rank, c.Rank, c.Name)
		case k.rank != model.NoRank:
			lbl = fmt.Sprintf("rank %d %s", k.rank, c.Name)
		}
		ch := ""
		if pc, ok := compare.Pct(bd, cd, true); ok {
			ch = fmt.Sprintf(" (%+.1f%%)", pc)
		}
		rows = append(rows,
			hbar{label: lbl, value: fmt.Sprintf("base %s, GPU busy %.1f%%", bd, pct(b.GPUBusy, bd)), segs: []seg{
				{v: float64(b.GPUBusy), class: cCompute, tip: "base GPU busy " + b.GPUBusy.String()},
				{v: float64(bd - b.GPUBusy), class: cIdle, tip: "base GPU idle " + (bd - b.GPUBusy).String()}}},
			hbar{label: "", value: fmt.Sprintf("candidate %s%s, GPU busy %.1f%%", cd, ch, pct(c.GPUBusy, cd)), segs: []seg{
				{v: float64(c.GPUBusy), class: cCompute, tip: "candidate GPU busy " + c.GPUBusy.String()},
				{v: float64(cd - c.GPUBusy), class: cIdle, tip: "candidate GPU idle " + (cd - c.GPUBusy).String()}}})
	}
	p.f("<h2>Steps</h2>\n<p>The n-th profiler step of each rank on both sides: its length, split into GPU busy and GPU idle, base above candidate.</p>\n")
	if more > 0 {
		p.f("<p class=\"muted\">First %d of %d step pairs.</p>\n", maxDiffSteps, maxDiffSteps+more)
	}
	p.f("%s\n", hbars("Step time, base vs candidate", rows, mx, []seg{{class: cCompute, label: "GPU busy"}, {class: cIdle, label: "GPU idle"}}))
}
