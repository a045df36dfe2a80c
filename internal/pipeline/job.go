package pipeline

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors/commwait"
	"github.com/tracedx/tracedx/model"
)

// splitRanks replaces each Nsight Systems capture that holds several
// processes on their own GPUs by one trace per process (model.SplitRanks):
// the ranks of one job.
func splitRanks(traces []*model.Trace) []*model.Trace {
	var out []*model.Trace
	for _, t := range traces {
		if t.Format == model.FormatNsys {
			if parts := model.SplitRanks(t); parts != nil {
				out = append(out, parts...)
				continue
			}
		}
		out = append(out, t)
	}
	return out
}

// rankTable builds the job table: one row per rank of a multi-rank set.
func rankTable(set *model.TraceSet, r *model.Report) []model.RankSummary {
	if !set.Job().MultiRank() {
		return nil
	}
	traces := set.Timelines()
	if len(traces) == 0 {
		return nil
	}
	var lateness []model.Duration
	if m := commwait.Match(traces); len(m.Matches) >= 2 {
		lateness = m.Arrivals().Mean
	}
	rows := make([]model.RankSummary, len(traces))
	index := map[int]int{}
	for i, t := range traces {
		row := model.RankSummary{Rank: t.Rank, ExposedComm: -1, Lateness: -1, StepP50: -1}
		if d, ok := commwait.ExposedComm(t); ok {
			row.ExposedComm = d
		}
		if lateness != nil {
			row.Lateness = lateness[i]
		}
		rows[i] = row
		if _, dup := index[t.Rank]; !dup {
			index[t.Rank] = i
		}
	}
	for _, d := range r.Devices {
		if i, ok := index[d.Rank]; ok {
			rows[i].Devices++
			rows[i].Span += d.Span
			rows[i].Busy += d.Busy
			rows[i].Idle += d.Idle
		}
	}
	steps := map[int][]model.Duration{}
	for _, s := range r.Summary.Steps {
		steps[s.Rank] = append(steps[s.Rank], s.End.Sub(s.Start))
	}
	for rank, ds := range steps {
		if i, ok := index[rank]; ok {
			sort.Slice(ds, func(a, b int) bool { return ds[a] < ds[b] })
			rows[i].StepP50, rows[i].Steps = ds[len(ds)/2], len(ds)
		}
	}
	return rows
}

// findingRank returns the one rank a finding is about (all its evidence on
// that rank), or ok false for a finding of several ranks or none.
func findingRank(f *model.Finding) (rank int, ok bool) {
	rank = model.NoRank
	for _, e := range f.Evidence {
		if e.Rank == model.NoRank || (rank != model.NoRank && e.Rank != rank) {
			return 0, false
		}
		rank = e.Rank
	}
	return rank, rank != model.NoRank
}

// groupAcrossRanks folds the findings that one rule reports on several ranks
// of a job into one finding: the worst rank's title, message and metrics,
// every rank's metrics as rank<R>_<name>, one evidence item per rank. A rule
// reporting twice on one rank (several devices) is left as it is.
func groupAcrossRanks(fs []model.Finding, job model.Job) []model.Finding {
	if !job.MultiRank() {
		return fs
	}
	type group struct {
		idx   []int
		ranks map[int]bool
		dup   bool
	}
	groups := map[string]*group{}
	for i := range fs {
		rank, ok := findingRank(&fs[i])
		if !ok {
			continue
		}
		k := fs[i].Kind()
		g := groups[k]
		if g == nil {
			g = &group{ranks: map[int]bool{}}
			groups[k] = g
		}
		g.dup = g.dup || g.ranks[rank]
		g.ranks[rank] = true
		g.idx = append(g.idx, i)
	}
	merged := map[int]model.Finding{} // first index of a group → the grouped finding
	drop := map[int]bool{}
	for _, g := range groups {
		if g.dup || len(g.idx) < 2 {
			continue
		}
		merged[g.idx[0]] = mergeRanks(fs, g.idx, job)
		for _, i := range g.idx[1:] {
			drop[i] = true
		}
	}
	var out []model.Finding
	for i := range fs {
		if drop[i] {
			continue
		}
		if m, ok := merged[i]; ok {
			out = append(out, m)
			continue
		}
		out = append(out, fs[i])
	}
	return out
}

// mergeRanks builds the grouped finding of fs[idx...] (one per rank).
func mergeRanks(fs []model.Finding, idx []int, job model.Job) model.Finding {
	sort.SliceStable(idx, func(a, b int) bool {
		ra, _ := findingRank(&fs[idx[a]])
		rb, _ := findingRank(&fs[idx[b]])
		return ra < rb
	})
	worst := idx[0]
	for _, i := range idx[1:] {
		if fs[i].Severity > fs[worst].Severity || (fs[i].Severity == fs[worst].Severity && fs[i].Cost() > fs[worst].Cost()) {
			worst = i
		}
	}
	w := fs[worst]
	wr, _ := findingRank(&w)
	g := model.Finding{Rule: w.Rule, Severity: w.Severity, Layer: w.Layer, Confidence: w.Confidence, Recommendation: w.Recommendation}
	var ranks []int
	sevs := map[model.Severity]int{}
	for _, i := range idx {
		r, _ := findingRank(&fs[i])
		ranks = append(ranks, r)
		sevs[fs[i].Severity]++
	}
	of := fmt.Sprintf("%d", len(ranks))
	if job.WorldSize > 0 {
		of += fmt.Sprintf(" of %d", job.WorldSize)
	}
	g.Title = fmt.Sprintf("%s (on %s ranks; worst: rank %d)", w.Title, of, wr)
	var bySev []string
	for _, s := range []model.Severity{model.SevError, model.SevWarning, model.SevInfo} {
		if sevs[s] > 0 {
			bySev = append(bySev, fmt.Sprintf("%d %s", sevs[s], s))
		}
	}
	g.Message = fmt.Sprintf("%s This finding fires on %s ranks (%s; %s); the figures above are rank %d's, the worst. Each rank's figures are in the per-rank table.",
		strings.TrimSpace(w.Message), of, model.RangesText(ranks), strings.Join(bySev, ", "), wr)
	g.Metrics = append(g.Metrics, w.Metrics...)
	g.Metrics = append(g.Metrics, model.Metric{Name: "ranks_affected", Value: float64(len(ranks)), Unit: "count"})
	for _, i := range idx {
		r, _ := findingRank(&fs[i])
		for _, m := range fs[i].Metrics {
			m.Name = model.RankMetricName(r, m.Name)
			g.Metrics = append(g.Metrics, m)
		}
		if len(fs[i].Evidence) > 0 {
			e := fs[i].Evidence[0]
			e.Note = fmt.Sprintf("[%s] %s", fs[i].Severity, e.Note)
			g.Evidence = append(g.Evidence, e)
		}
	}
	g.Ranks = ranks
	return g
}

// groupNotMeasurable folds not-measurable reasons that differ only by the
// input they name into one line per rule and reason: "64 inputs (rank00.json
// ... rank63.json): no GIL data ...".
func groupNotMeasurable(nms []model.NotMeasurable, set *model.TraceSet) []model.NotMeasurable {
	if len(set.Traces) < 2 {
		return nms
	}
	type group struct {
		inputs []string
	}
	groups := map[model.NotMeasurable]*group{}
	var keys []model.NotMeasurable
	var out []model.NotMeasurable
	for _, n := range nms {
		key, input, longest := n, "", ""
		for _, t := range set.Traces { // the longest name found (rank1.json is in rank11.json)
			for _, name := range []string{t.Path, filepath.Base(t.Path)} {
				if len(name) > len(longest) && strings.Contains(n.Reason, name) {
					longest, input = name, filepath.Base(t.Path)
				}
			}
		}
		if longest != "" {
			key.Reason = strings.ReplaceAll(n.Reason, longest, "{input}")
		}
		if input == "" {
			out = append(out, n)
			continue
		}
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
			keys = append(keys, key)
		}
		g.inputs = append(g.inputs, input)
	}
	for _, k := range keys {
		g := groups[k]
		what := g.inputs[0]
		if len(g.inputs) > 1 {
			what = fmt.Sprintf("%d inputs (%s ... %s)", len(g.inputs), g.inputs[0], g.inputs[len(g.inputs)-1])
		}
		out = append(out, model.NotMeasurable{Rule: k.Rule, Reason: strings.ReplaceAll(k.Reason, "{input}", what)})
	}
	return out
}
