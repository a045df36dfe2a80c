package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/kinetogen"
	"github.com/tracedx/tracedx/model"
	"github.com/tracedx/tracedx/policy"
)

// genJob builds n ranks of one job (world size world, 0 = unstated): 6
// profiler steps, each with compute kernels separated by host gaps (so
// kernel-gap fires on every rank) and two all-reduces of different sizes with
// sequence numbers. Rank late arrives lateUS late at every collective; every
// rank's clock is shifted by rank×1 ms.
func genJob(n, world, late int, lateUS float64) []*model.Trace {
	var out []*model.Trace
	for r := 0; r < n; r++ {
		b := fixture.New(fmt.Sprintf("rank%02d.json", r), model.FormatKineto)
		b.T.Rank, b.T.WorldSize = r, world
		b.Device(0, "GPU")
		th := b.Thread(1, "main")
		shift := float64(r) * 1000
		seq := int64(0)
		for s := 0; s < 6; s++ {
			at := shift + float64(s)*10000
			b.Step(th, s+10, at, at+9900)
			for k := 0; k < 8; k++ {
				ks := at + 100 + float64(k)*600
				b.Kernel(0, 7, "sm90_gemm", ks, ks+300, th, ks-20)
			}
			for c, size := range []int64{1 << 26, 1 << 12} {
				cs := at + 5200 + float64(c)*2000
				start := cs
				if r == late {
					start += lateUS
				}
				end := cs + lateUS + 500
				if late < 0 {
					end = cs + 500
				}
				b.Collective(0, 20, model.CollAllReduce, size, start, end, th, start-10)
				b.T.Collectives[len(b.T.Collectives)-1].Seq = seq
				seq++
			}
		}
		out = append(out, b.Build())
	}
	return out
}

func straggler(r *model.Report) *model.Finding {
	for i := range r.Findings {
		if strings.HasPrefix(r.Findings[i].Title, "Straggler:") {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestJob64RanksGrouped: a 64-rank job gives one finding per rule with a
// per-rank table, the job table first, "64 of 64 ranks", the planted
// straggler, and Markdown under the ticket limit without cutting.
func TestJob64RanksGrouped(t *testing.T) {
	r := AnalyzeSet(model.NewTraceSet(genJob(64, 64, 13, 400)), Options{})
	if got := r.Job.Describe(); got != "64 of 64 ranks" {
		t.Errorf("job %q", got)
	}
	f := straggler(r)
	if f == nil {
		t.Fatalf("no straggler: %+v", r.Findings)
	}
	if m, _ := f.Metric("straggler_rank"); m.Value != 13 {
		t.Errorf("straggler %v, want 13", m.Value)
	}
	if m, _ := f.Metric("matched_collectives"); m.Value != 11 {
		t.Errorf("matched %v, want 11 (12 minus the first)", m.Value)
	}
	kinds := map[string]int{}
	for _, f := range r.Findings {
		kinds[f.Kind()]++
		if f.Rule == "kernel-gap" && len(f.Ranks) != 64 {
			t.Errorf("kernel-gap not grouped over 64 ranks: %d ranks, %q", len(f.Ranks), f.Title)
		}
		if len(f.Ranks) > 0 && f.Rule == "kernel-gap" {
			if _, ok := f.RankMetric(63, "gap_total_ns"); !ok || len(f.Evidence) != 64 {
				t.Errorf("grouped finding lacks per-rank metrics or one evidence per rank (%d)", len(f.Evidence))
			}
		}
	}
	for k, n := range kinds {
		if n > 1 {
			t.Errorf("%d findings of kind %q: not grouped", n, k)
		}
	}
	if len(r.RankTable) != 64 || r.RankTable[13].Lateness != 400*model.Microsecond || r.RankTable[0].StepP50 != 9900*model.Microsecond {
		t.Errorf("rank table row 13: %+v, row 0: %+v", r.RankTable[13], r.RankTable[0])
	}
	var md bytes.Buffer
	if err := export.Markdown(&md, r); err != nil {
		t.Fatal(err)
	}
	s := md.String()
	t.Logf("64 ranks: %d findings, Markdown %d bytes", len(r.Findings), md.Len())
	if md.Len() > export.MaxMarkdownBytes || strings.Contains(s, "Report cut") {
		t.Errorf("Markdown %d bytes (limit %d) or cut", md.Len(), export.MaxMarkdownBytes)
	}
	if !strings.HasPrefix(s, "# tracedx report: job, 64 of 64 ranks") || strings.Index(s, "## Job:") > strings.Index(s, "## Summary") {
		t.Errorf("job header / table not first:\n%s", s[:min(len(s), 600)])
	}
	var js bytes.Buffer
	if err := export.JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Job struct {
			WorldSize  *int  `json:"world_size"`
			RanksGiven []int `json:"ranks_given"`
		} `json:"job"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Job.WorldSize == nil || *doc.Job.WorldSize != 64 || len(doc.Job.RanksGiven) != 64 {
		t.Errorf("json job: %+v", doc.Job)
	}
}

// TestJobPartialAndUnknownWorld: 2 of 128 ranks says so; an unstated world
// size is null in JSON, never the number of files.
func TestJobPartialAndUnknownWorld(t *testing.T) {
	r := AnalyzeSet(model.NewTraceSet(genJob(2, 128, 1, 300)), Options{})
	if got := r.Job.Describe(); got != "2 of 128 ranks" {
		t.Errorf("job %q", got)
	}
	if f := straggler(r); f == nil || !strings.Contains(f.Message, "Only 2 of 128 ranks") {
		t.Errorf("straggler should say only 2 of 128 ranks were given: %+v", f)
	}
	r = AnalyzeSet(model.NewTraceSet(genJob(3, 0, -1, 0)), Options{})
	if r.Job.WorldSize != 0 || r.Job.Describe() != "3 ranks, world size unknown" {
		t.Errorf("job %+v %q", r.Job, r.Job.Describe())
	}
	if f := straggler(r); f != nil {
		t.Errorf("clean job: straggler %q", f.Title)
	}
	var js bytes.Buffer
	if err := export.JSON(&js, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"world_size": null`) {
		t.Errorf("world_size should be null")
	}
}

// TestKinetoJobRoundTrip writes a generated job as Kineto files and analyses
// them: sequence numbers survive the importer and pair the collectives.
func TestKinetoJobRoundTrip(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, tr := range genJob(4, 4, 2, 250) {
		p := filepath.Join(dir, filepath.Base(tr.Path))
		if err := kinetogen.WriteFile(p, tr, kinetogen.Layout{TS: kinetogen.RelativeBase}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	r, err := Analyze(context.Background(), paths, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := straggler(r)
	if f == nil {
		t.Fatalf("no straggler: %+v / %+v", r.Findings, r.NotMeasurable)
	}
	if m, _ := f.Metric("straggler_rank"); m.Value != 2 {
		t.Errorf("straggler %v, want 2", m.Value)
	}
	if !strings.Contains(f.Message, "sequence number") || r.Job.Describe() != "4 of 4 ranks" {
		t.Errorf("want matching by sequence number and 4 of 4 ranks: %s / %s", f.Message, r.Job.Describe())
	}
}

// TestNotMeasurableGrouped: one reason per rule, not one per rank.
func TestNotMeasurableGrouped(t *testing.T) {
	r := AnalyzeSet(model.NewTraceSet(genJob(12, 12, -1, 0)), Options{})
	seen := map[string]int{}
	for _, n := range r.NotMeasurable {
		seen[n.Rule]++
		if strings.Contains(n.Reason, "rank01.json") && !strings.Contains(n.Reason, "12 inputs (rank00.json ... rank11.json)") {
			t.Errorf("not grouped: %s", n.Reason)
		}
	}
	if seen["gil-stall"] != 1 {
		t.Errorf("gil-stall reasons: %d, want 1: %+v", seen["gil-stall"], r.NotMeasurable)
	}
}

// TestJobLogIsNotARank: a job log given with the traces states the world
// size but is not counted as a rank.
func TestJobLogIsNotARank(t *testing.T) {
	traces := genJob(2, 0, 1, 300)
	log := model.NewTrace("train.log", model.FormatJobLog)
	log.JobLog = &model.JobLog{WorldSize: 16}
	log.WorldSize = 16
	r := AnalyzeSet(model.NewTraceSet(append(traces, log)), Options{})
	if got := r.Job.Describe(); got != "2 of 16 ranks" {
		t.Errorf("job %q", got)
	}
	if f := straggler(r); f == nil || !strings.Contains(f.Title, "2 of 16 ranks") {
		t.Errorf("straggler over the two timelines: %+v", f)
	}
	if len(r.RankTable) != 2 {
		t.Errorf("rank table: %+v", r.RankTable)
	}
}

// TestGroupedFindingsKeepPerRankGates: policy metrics and the diff's kernel
// gap total still see every rank of a grouped finding.
func TestGroupedFindingsKeepPerRankGates(t *testing.T) {
	r := AnalyzeSet(model.NewTraceSet(genJob(8, 8, 3, 200)), Options{})
	var gaps, count int
	var sum float64
	for _, s := range policy.Metrics(r) {
		switch s.Name {
		case "finding.kernel-gap.gap_total_ns":
			gaps++
			sum += s.Value
		case "finding.kernel-gap.count":
			count = int(s.Value)
		}
	}
	if gaps != 8 || count != 8 {
		t.Errorf("per-rank gap samples %d, count %d; want 8 and 8", gaps, count)
	}
	for _, f := range r.Findings {
		if f.Rule == "kernel-gap" {
			if v, _ := f.SumOverRanks("gap_total_ns"); v != sum {
				t.Errorf("SumOverRanks %v, policy samples sum %v", v, sum)
			}
		}
	}
}
