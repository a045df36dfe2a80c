package export

import (
	"fmt"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// The job part of the JSON wire form.
type (
	jsonJob struct {
		// WorldSize is null when no input states the job's rank count.
		WorldSize     *int           `json:"world_size"`
		WorldSource   string         `json:"world_size_source,omitempty"`
		WorldInferred bool           `json:"world_size_inferred,omitempty"`
		RanksGiven    []int          `json:"ranks_given"`
		Unranked      int            `json:"inputs_without_rank,omitempty"`
		Ranks         []jsonRankStat `json:"rank_table,omitempty"`
	}
	jsonRankStat struct {
		Rank          int    `json:"rank"`
		Devices       int    `json:"devices"`
		SpanNs        int64  `json:"span_ns"`
		BusyNs        int64  `json:"busy_ns"`
		IdleNs        int64  `json:"idle_ns"`
		ExposedCommNs *int64 `json:"exposed_comm_ns"`
		LatenessNs    *int64 `json:"mean_lateness_ns"`
		StepP50Ns     *int64 `json:"step_p50_ns"`
		Steps         int    `json:"steps"`
	}
)

func jobJSON(r *model.Report) jsonJob {
	j := r.Job
	out := jsonJob{WorldSource: j.WorldSource, WorldInferred: j.WorldInferred, RanksGiven: append([]int{}, j.Ranks...), Unranked: j.Unranked}
	if j.WorldSize > 0 {
		w := j.WorldSize
		out.WorldSize = &w
	}
	for _, row := range r.RankTable {
		out.Ranks = append(out.Ranks, jsonRankStat{Rank: row.Rank, Devices: row.Devices, SpanNs: int64(row.Span), BusyNs: int64(row.Busy), IdleNs: int64(row.Idle),
			ExposedCommNs: optI(int64(row.ExposedComm)), LatenessNs: optI(int64(row.Lateness)), StepP50Ns: optI(int64(row.StepP50)), Steps: row.Steps})
	}
	return out
}

// jobTitle is the report title's job part: "job, 8 of 8 ranks" for a
// multi-rank report, "" otherwise.
func jobTitle(r *model.Report) string {
	if !r.Job.MultiRank() {
		return ""
	}
	return "job, " + r.Job.Describe()
}

// rankRows returns the job table's rows as cells: rank, devices, busy, idle,
// exposed communication, lateness, step p50.
func rankRows(r *model.Report) [][]string {
	var rows [][]string
	for _, row := range r.RankTable {
		rows = append(rows, []string{rankLabel(row.Rank), fmt.Sprint(row.Devices),
			fmt.Sprintf("%s (%.1f%%)", row.Busy, pct(row.Busy, row.Span)), fmt.Sprintf("%s (%.1f%%)", row.Idle, pct(row.Idle, row.Span)),
			optDur(row.ExposedComm).s, optDur(row.Lateness).s, optDur(row.StepP50).s})
	}
	return rows
}

var rankHeader = []string{"rank", "GPUs", "busy", "idle", "exposed comm", "mean lateness", "step p50"}

// writeJobMD writes the job section first in a multi-rank Markdown report;
// past 16 ranks the table is folded in <details>.
func writeJobMD(p func(string, ...any), nm names, r *model.Report) {
	if !r.Job.MultiRank() {
		return
	}
	j := r.Job
	p("## Job: %s\n\n", nm.md(j.Describe()))
	p("Ranks given: %s", nm.md(j.RanksText()))
	if j.Unranked > 0 {
		p("; %d input(s) without a rank", j.Unranked)
	}
	if j.WorldSize > j.Given() {
		p(". **Only %d of the job's %d ranks were given**: cross-rank findings compare these only.", j.Given(), j.WorldSize)
	}
	p("\n\n")
	rows := rankRows(r)
	if len(rows) == 0 {
		return
	}
	fold := len(rows) > 16
	if fold {
		p("<details><summary>Per-rank table (%d ranks)</summary>\n\n", len(rows))
	}
	p("| %s |\n|---|--:|--:|--:|--:|--:|--:|\n", strings.Join(rankHeader, " | "))
	for _, c := range rows {
		p("| %s |\n", strings.Join(c, " | "))
	}
	if fold {
		p("\n</details>\n")
	}
	p("\nMean lateness: mean arrival lateness at matched collectives after the first (see `comm-wait`); exposed comm: communication no computation overlaps.\n\n")
}

// writeJobText writes the job section of the terminal summary.
func writeJobText(p func(string, ...any), r *model.Report) {
	if !r.Job.MultiRank() {
		return
	}
	p("\nJob: %s (ranks %s)\n", r.Job.Describe(), r.Job.RanksText())
	rows := rankRows(r)
	if len(rows) == 0 {
		return
	}
	p("  %-5s %4s %20s %20s %14s %14s %12s\n", rankHeader[0], rankHeader[1], rankHeader[2], rankHeader[3], rankHeader[4], rankHeader[5], rankHeader[6])
	for _, c := range rows {
		p("  %-5s %4s %20s %20s %14s %14s %12s\n", c[0], c[1], c[2], c[3], c[4], c[5], c[6])
	}
}

// rankColumns picks up to four per-rank metrics of a finding with Ranks to
// tabulate: the names (without the rank prefix) of the first rank's metrics,
// in order.
func rankColumns(f *model.Finding) []string {
	if len(f.Ranks) == 0 {
		return nil
	}
	prefix := model.RankMetricName(f.Ranks[0], "")
	var cols []string
	for _, m := range f.Metrics {
		if len(cols) == 4 {
			break
		}
		if strings.HasPrefix(m.Name, prefix) {
			cols = append(cols, strings.TrimPrefix(m.Name, prefix))
		}
	}
	return cols
}

// isRankMetric says whether name is one of a grouped finding's per-rank metrics.
func isRankMetric(f *model.Finding, name string) bool {
	if len(f.Ranks) == 0 || !strings.HasPrefix(name, "rank") {
		return false
	}
	for _, r := range f.Ranks {
		if strings.HasPrefix(name, model.RankMetricName(r, "")) {
			return true
		}
	}
	return false
}

// writeRankTableMD writes a grouped finding's per-rank table (folded past 8 ranks).
func writeRankTableMD(p func(string, ...any), nm names, f *model.Finding) {
	if len(f.Ranks) == 0 {
		return
	}
	cols := rankColumns(f)
	fold := len(f.Ranks) > 8
	if fold {
		p("<details><summary>Per-rank figures (%d ranks)</summary>\n\n", len(f.Ranks))
	}
	p("| rank |")
	for _, c := range cols {
		p(" %s |", nm.code(c))
	}
	p("\n|---|%s\n", strings.Repeat("--:|", len(cols)))
	for _, r := range f.Ranks {
		p("| %d |", r)
		for _, c := range cols {
			if m, ok := f.RankMetric(r, c); ok {
				m.Name = c
				p(" %s |", nm.md(formatMetric(m)))
			} else {
				p(" - |")
			}
		}
		p("\n")
	}
	if fold {
		p("\n</details>\n")
	}
	p("\n")
}

// writeRankTableText writes a grouped finding's per-rank figures, one line per rank.
func writeRankTableText(p func(string, ...any), f *model.Finding, indent string) {
	cols := rankColumns(f)
	for _, r := range f.Ranks {
		var parts []string
		for _, c := range cols {
			if m, ok := f.RankMetric(r, c); ok {
				parts = append(parts, c+"="+formatMetric(m))
			}
		}
		p("%srank %d: %s\n", indent, r, strings.Join(parts, ", "))
	}
}
