package html_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/export/html"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/pipeline"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

func exampleReport() *model.Report {
	r := pipeline.AnalyzeSet(model.NewTraceSet([]*model.Trace{fixture.Example()}), pipeline.Options{})
	r.ToolVersion = "test"
	return r
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test ./export/html -update, then review)", name)
	}
}

// TestGoldenHTML: the example's page is byte-identical across renders and
// matches the golden file; it is self-contained (no script, no URL fetch).
func TestGoldenHTML(t *testing.T) {
	var a, b bytes.Buffer
	if err := export.Render(&a, exampleReport(), "html"); err != nil {
		t.Fatal(err)
	}
	if err := export.Render(&b, exampleReport(), "html"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two renders differ")
	}
	golden(t, "example.html", a.Bytes())
	checkSelfContained(t, a.String())
	for _, id := range []string{"GPU time by class per device", "Busy/idle timeline of rank 0 gpu 0", "Top kernels by total time", "Step time", "Evidence windows of kernel-gap"} {
		if !strings.Contains(a.String(), `aria-label="`+id) {
			t.Errorf("plot %q missing", id)
		}
	}
}

func checkSelfContained(t *testing.T, s string) {
	t.Helper()
	// Every plot draws data, not only its legend.
	for _, svg := range strings.Split(s, `<svg class="plot"`)[1:] {
		svg, _, _ = strings.Cut(svg, "</svg>")
		if !strings.Contains(svg, `class="mark `) {
			label, _, _ := strings.Cut(svg, `">`)
			t.Errorf("plot without data marks:%s", label)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://", "src=", "@import", "url("} {
		if strings.Contains(strings.ReplaceAll(s, `xmlns="http://www.w3.org/2000/svg"`, ""), bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}

func TestDiffHTML(t *testing.T) {
	side := func() compare.Side {
		set := model.NewTraceSet([]*model.Trace{fixture.Example()})
		return compare.Side{Report: pipeline.AnalyzeSet(set, pipeline.Options{}), Set: set}
	}
	base, cand := side(), side()
	res := compare.Compare(base, cand, compare.Options{})
	var a, b bytes.Buffer
	if err := html.DiffReports(&a, res, base.Report, cand.Report); err != nil {
		t.Fatal(err)
	}
	if err := html.DiffReports(&b, res, base.Report, cand.Report); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two renders differ")
	}
	checkSelfContained(t, a.String())
	for _, plot := range []string{"Time per class, base vs candidate", "Step time, base vs candidate", "Kernel time by class, base vs candidate", "Kernel time, base vs candidate"} {
		if !strings.Contains(a.String(), `aria-label="`+plot+`"`) {
			t.Errorf("diff page lacks the plot %q", plot)
		}
	}
}

// TestPerfettoLink: a report written beside NAME.perfetto.json(.gz) links
// each finding with evidence to it by its ref; without one, no link.
func TestPerfettoLink(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "run 1.html")
	if got := html.PerfettoBeside(page); got != "" {
		t.Errorf("no Perfetto file: got %q", got)
	}
	os.WriteFile(filepath.Join(dir, "run 1.perfetto.json"), []byte("{}"), 0o644)
	if got := html.PerfettoBeside(page); got != "run 1.perfetto.json" {
		t.Errorf("got %q, want run 1.perfetto.json", got)
	}
	os.WriteFile(filepath.Join(dir, "run 1.perfetto.json.gz"), []byte("x"), 0o644)
	if got := html.PerfettoBeside(page); got != "run 1.perfetto.json.gz" {
		t.Errorf("got %q, want the .gz first", got)
	}
	if html.PerfettoBeside("-") != "" || html.PerfettoBeside("") != "" {
		t.Error("stdout has no file beside it")
	}
	var b bytes.Buffer
	if err := export.RenderOpts(&b, exampleReport(), "html", export.Options{Perfetto: "run 1.perfetto.json.gz"}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.Contains(s, `<a href="run%201.perfetto.json.gz">run 1.perfetto.json.gz</a>`) || !strings.Contains(s, "search <code>kernel-gap#1</code>") {
		t.Errorf("page lacks the Perfetto link of kernel-gap#1")
	}
	checkSelfContained(t, s)
}

// jobReport is a generated 4-rank job: 20 steps of a GEMM then an
// all-reduce, rank 2 arriving 500 µs late at every all-reduce, nothing
// overlapped with communication.
func jobReport() *model.Report {
	var traces []*model.Trace
	for r := 0; r < 4; r++ {
		b := fixture.New(fmt.Sprintf("rank%d.json", r), model.FormatKineto)
		b.T.Rank, b.T.WorldSize = r, 4
		th := b.Thread(1, "main")
		for i := 0; i < 20; i++ {
			s := float64(i) * 2000
			start := s + 100
			if r == 2 {
				start += 500
			}
			b.Range(th, model.RangeStep, fmt.Sprintf("ProfilerStep#%d", i), s, s+1900)
			b.Kernel(0, 7, "ampere_sgemm_128x64_tn", s, s+90+float64(r)*20, th, s-10)
			b.Collective(0, 20, model.CollAllReduce, 1<<20, start, s+800, th, start-5)
		}
		traces = append(traces, b.Build())
	}
	r := pipeline.AnalyzeSet(model.NewTraceSet(traces), pipeline.Options{})
	r.ToolVersion = "test"
	return r
}

// TestGoldenJobHTML: the multi-rank page has the per-rank bars and the
// lateness of the planted straggler, and matches its golden file.
func TestGoldenJobHTML(t *testing.T) {
	var b bytes.Buffer
	if err := export.Render(&b, jobReport(), "html"); err != nil {
		t.Fatal(err)
	}
	golden(t, "job.html", b.Bytes())
	s := b.String()
	checkSelfContained(t, s)
	for _, want := range []string{`aria-label="Per-rank time`, `aria-label="Per-rank lateness at matched collectives"`, "500.0µs (straggler)"} {
		if !strings.Contains(s, want) {
			t.Errorf("job page lacks %q", want)
		}
	}
}
