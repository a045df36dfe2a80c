package pipeline

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/internal/corpus"
)

// TestCorpusAnalyzes runs the whole pipeline (import, Validate, breakdown,
// every detector, every report format) over every real file of the shared
// corpus: each must analyse without error.
func TestCorpusAnalyzes(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus run skipped in -short mode")
	}
	var files []string
	files = append(files, corpus.Files(t, "corpus/kineto", ".json.gz", ".json")...)
	files = append(files, corpus.Files(t, "corpus/nsys", ".sqlite")...)
	files = append(files, corpus.Files(t, "corpus/nccl", ".log")...)
	files = append(files, corpus.Files(t, "corpus/joblogs", ".log")...)
	for _, f := range files {
		f := f
		t.Run(filepath.Base(f), func(t *testing.T) {
			set, err := Load(context.Background(), []string{f}, Options{})
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			for _, tr := range set.Traces {
				if err := tr.Validate(); err != nil {
					t.Fatalf("Validate: %v", err)
				}
			}
			r := AnalyzeSet(set, Options{})
			for _, w := range r.Warnings {
				if w.Position == "analysis" {
					t.Errorf("a rule could not run: %s", w.Message)
				}
			}
			for _, format := range export.Formats {
				var buf bytes.Buffer
				if err := export.Render(&buf, r, format); err != nil {
					t.Fatalf("render %s: %v", format, err)
				}
				if buf.Len() == 0 {
					t.Fatalf("empty %s report", format)
				}
			}
			var md bytes.Buffer
			export.Render(&md, r, "md")
			name := filepath.Base(f)
			switch {
			case strings.Contains(name, "mtia"):
				if !strings.Contains(md.String(), "non-GPU accelerator") {
					t.Errorf("MTIA trace: the report does not say it is a non-GPU accelerator")
				}
			case strings.Contains(name, "cpu-only"):
				if !strings.Contains(md.String(), "no GPU activity") {
					t.Errorf("CPU-only trace: the report does not say there is no GPU activity")
				}
			}
		})
	}
}

// TestDLRMStraggler analyses the 8-rank DLRM set together and expects the
// cross-rank comm-wait finding to name a straggler. Read off the events: the
// 8 NCCL kernels per rank end within 2 µs of each other on every rank (one
// host clock); the first SendRecv starts 7.6 ms apart (rank 7 last: the
// ranks' ProfilerStep#10 starts are as far apart, profiler-start skew); of
// the 7 after it rank 7 starts last at the 4 send/recv-phase collectives
// (up to 1.1 ms after rank 4) and ranks 5 and 4 at the last 3 (all-reduce
// phase), so rank 7 is the rank the others wait for longest.
func TestDLRMStraggler(t *testing.T) {
	dir := corpus.Dir(t, "corpus/kineto")
	files, _ := filepath.Glob(filepath.Join(dir, "param-dlrm-w8-rank*.pt.trace.json.gz"))
	if len(files) != 8 {
		t.Fatalf("want the 8 DLRM ranks, found %d", len(files))
	}
	r, err := Analyze(context.Background(), files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range r.Findings {
		if f.Rule == "comm-wait" && strings.HasPrefix(f.Title, "Straggler: rank 7") {
			found = true
			if m, _ := f.Metric("matched_collectives"); m.Value != 7 {
				t.Errorf("matched %v collectives after the first, want 7", m.Value)
			}
			if m, _ := f.Metric("rejected_matches"); m.Value != 0 {
				t.Errorf("rejected %v matches", m.Value)
			}
			if m, _ := f.Metric("first_collective_skew_ns"); m.Value < 7e6 {
				t.Errorf("first-collective skew %v, want ~7.6 ms", m.Value)
			}
		}
	}
	if !found {
		t.Errorf("no straggler finding naming rank 7")
	}
	if got := r.Job.Describe(); got != "8 of 8 ranks" {
		t.Errorf("job: %q", got)
	}
	perRule := map[string]int{}
	for _, f := range r.Findings {
		if len(f.Ranks) == 0 {
			perRule[f.Kind()]++
		}
	}
	for k, n := range perRule {
		if n > 1 {
			t.Errorf("%d ungrouped findings of kind %q", n, k)
		}
	}
	if len(r.RankTable) != 8 || r.RankTable[7].Lateness <= 0 || r.RankTable[0].StepP50 <= 0 {
		t.Errorf("rank table: %+v", r.RankTable)
	}
}
