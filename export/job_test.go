package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/model"
)

// TestBenchRanksUnknownOrInferred: a log excerpt without rank lines shows
// "?" ranks, never 0 or "1 rank"; an inferred count says so.
func TestBenchRanksUnknownOrInferred(t *testing.T) {
	row := model.BenchRow{SizeBytes: 1 << 20, OutOfPlace: model.BenchResult{Present: true, TimeUS: 10, AlgBWGBps: 100, BusBWGBps: 175}}
	r := &model.Report{Bench: []model.InputBench{{Path: "x.log", Rank: model.NoRank, Bench: &model.Bench{Runs: []model.BenchRun{
		{Collective: "all_reduce", Rows: []model.BenchRow{row}, ReportedAvgBusBW: -1},
		{Collective: "all_reduce", Ranks: 8, RanksInferred: true, Rows: []model.BenchRow{row}, ReportedAvgBusBW: -1},
	}}}}}
	for _, format := range []string{"text", "md"} {
		var buf bytes.Buffer
		if err := Render(&buf, r, format); err != nil {
			t.Fatal(err)
		}
		s := buf.String()
		if strings.Contains(s, "1 rank)") || !strings.Contains(s, "8 (inferred)") || !strings.Contains(s, "?") {
			t.Errorf("%s:\n%s", format, s)
		}
	}
}

// TestGroupedFindingRendering: a finding grouped over ranks shows a per-rank
// table (not 3 x N metric lines) in Markdown and one line per rank in text.
func TestGroupedFindingRendering(t *testing.T) {
	f := model.Finding{Rule: "kernel-gap", Severity: model.SevWarning, Title: "idle", Message: "m", Ranks: []int{0, 1},
		Metrics: []model.Metric{{Name: "gap_total_ns", Value: 5, Unit: "ns"}, {Name: "ranks_affected", Value: 2, Unit: "count"},
			{Name: "rank0_gap_total_ns", Value: 5, Unit: "ns"}, {Name: "rank1_gap_total_ns", Value: 3, Unit: "ns"}}}
	r := &model.Report{Job: model.Job{WorldSize: 4, Ranks: []int{0, 1}}, Findings: []model.Finding{f},
		RankTable: []model.RankSummary{{Rank: 0, ExposedComm: -1, Lateness: -1, StepP50: -1}, {Rank: 1, ExposedComm: -1, Lateness: -1, StepP50: -1}}}
	var md, txt bytes.Buffer
	if err := Render(&md, r, "md"); err != nil {
		t.Fatal(err)
	}
	if err := Render(&txt, r, "text"); err != nil {
		t.Fatal(err)
	}
	m := md.String()
	if !strings.Contains(m, "# tracedx report: job, 2 of 4 ranks") || !strings.Contains(m, "Only 2 of the job's 4 ranks") ||
		!strings.Contains(m, "| rank | `gap_total_ns` |") || strings.Contains(m, "`rank1_gap_total_ns`") {
		t.Errorf("md:\n%s", m)
	}
	if !strings.Contains(txt.String(), "rank 1: gap_total_ns=3ns") || !strings.Contains(txt.String(), "Job: 2 of 4 ranks") {
		t.Errorf("text:\n%s", txt.String())
	}
	if got := f.Cost(); got != 8 {
		t.Errorf("grouped cost %d, want the ranks' sum 8", got)
	}
}
