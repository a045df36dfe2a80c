package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/tracedx/tracedx/export/timeline"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/kinetogen"
	"github.com/tracedx/tracedx/model"
)

// runCLI runs the CLI and returns its exit code, stdout and stderr.
func runCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

type kspec struct {
	name       string
	start, end float64 // µs
}

// writeJob writes a Kineto trace of one rank: kernels on stream 7 launched
// 5µs before they start, and step ranges between the given times.
func writeJob(t *testing.T, path string, rank int, gpu string, ks []kspec, steps []float64) string {
	t.Helper()
	b := fixture.New(path, model.FormatKineto)
	b.T.Rank = rank
	b.T.Devices[0].Name = gpu
	th := b.Thread(1, "main")
	for _, k := range ks {
		b.Kernel(0, 7, k.name, k.start, k.end, th, k.start-5)
	}
	for i := 0; i+1 < len(steps); i++ {
		b.Range(th, model.RangeStep, fmt.Sprintf("ProfilerStep#%d", i+1), steps[i], steps[i+1])
	}
	if err := kinetogen.WriteFile(path, b.Build(), kinetogen.Layout{TS: kinetogen.FloatEpochNs}); err != nil {
		t.Fatal(err)
	}
	return path
}

// gapJob is 2,000 kernels of 80µs every 100µs with a 5ms hole after the
// first thousand.
func gapJob(t *testing.T, path string) string {
	var ks []kspec
	for i := 0; i < 2000; i++ {
		st := float64(i) * 100
		if i >= 1000 {
			st += 5000
		}
		ks = append(ks, kspec{fmt.Sprintf("k%d", i%5), st, st + 80})
	}
	return writeJob(t, path, 0, "Test GPU", ks, nil)
}

func TestExportCmdParquetAndArrow(t *testing.T) {
	dir := t.TempDir()
	in := gapJob(t, filepath.Join(dir, "gap.json"))
	for _, to := range []string{"parquet", "arrow"} {
		out := filepath.Join(dir, "out-"+to)
		code, _, stderr := runCLI("export", in, "--to", to, "-o", out)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", to, code, stderr)
		}
		for _, tab := range timeline.Tables() {
			if _, err := os.Stat(filepath.Join(out, tab+"."+to)); err != nil {
				t.Errorf("%s: %v", to, err)
			}
		}
		if !strings.Contains(stderr, "kernels."+to+" (2000 rows)") {
			t.Errorf("%s: stderr = %s", to, stderr)
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	f, err := os.Open(filepath.Join(dir, "out-parquet", "kernels.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, nil, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if tbl.NumRows() != 2000 {
		t.Errorf("kernels.parquet has %d rows", tbl.NumRows())
	}
	// A range keeps only what intersects it; --window is its deprecated alias.
	for _, flag := range []string{"--range", "--window"} {
		out := filepath.Join(dir, "range"+flag)
		code, _, stderr := runCLI("export", in, "--to", "arrow", "-o", out, flag, "0:1000")
		if code != 0 || !strings.Contains(stderr, "kernels.arrow (1 rows)") {
			t.Errorf("%s: exit %d: %s", flag, code, stderr)
		}
	}
	// --around with a 1ms pad: the 5ms gap and about ten kernels on each side.
	out := filepath.Join(dir, "around")
	code, _, stderr := runCLI("export", in, "--to", "parquet", "-o", out, "--around", "kernel-gap", "--pad", "1ms")
	var rows int
	if i := strings.Index(stderr, "kernels.parquet ("); i >= 0 {
		fmt.Sscanf(stderr[i+len("kernels.parquet ("):], "%d", &rows)
	}
	if code != 0 || rows < 18 || rows > 24 {
		t.Errorf("--around --pad 1ms: exit %d, %d kernel rows: %s", code, rows, stderr)
	}
	if code, _, _ := runCLI("export", in, "--to", "parquet", "-o", out, "--around", "kernel-gap", "--pad", "soon"); code != 2 {
		t.Errorf("bad --pad: exit %d", code)
	}
}

type chromeEvent struct {
	Ph   string         `json:"ph"`
	Cat  string         `json:"cat"`
	Name string         `json:"name"`
	TS   float64        `json:"ts"`
	Dur  float64        `json:"dur"`
	Args map[string]any `json:"args"`
}

func readChrome(t *testing.T, path string) ([]chromeEvent, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []chromeEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return doc.TraceEvents, len(data)
}

func TestExportCmdPerfettoAround(t *testing.T) {
	dir := t.TempDir()
	in := gapJob(t, filepath.Join(dir, "gap.json"))
	full := filepath.Join(dir, "full.json")
	if code, _, stderr := runCLI("export", in, "--to", "perfetto", "-o", full); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	evs, fullSize := readChrome(t, full)
	kernels, findings := 0, 0
	for _, e := range evs {
		if e.Ph == "X" && e.Cat == "kernel" {
			kernels++
		}
		if e.Cat == "finding" {
			findings++
		}
	}
	if kernels != 2000 || findings == 0 {
		t.Errorf("full export: %d kernels, %d finding slices", kernels, findings)
	}

	// -o NAME.json.gz: the same bytes, gzip-compressed.
	gz := filepath.Join(dir, "full.json.gz")
	if code, _, stderr := runCLI("export", in, "--to", "perfetto", "-o", gz); code != 0 {
		t.Fatalf("gzip: exit %d: %s", code, stderr)
	}
	zf, err := os.Open(gz)
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	zr, err := gzip.NewReader(zf)
	if err != nil {
		t.Fatalf("%s is not gzip: %v", gz, err)
	}
	unz, _ := io.ReadAll(zr)
	if plain, _ := os.ReadFile(full); !bytes.Equal(unz, plain) {
		t.Errorf("gunzipped %s differs from %s", gz, full)
	}

	small := filepath.Join(dir, "around.json")
	code, _, stderr := runCLI("export", in, "--to", "perfetto", "--around", "kernel-gap#1", "-o", small)
	if code != 0 {
		t.Fatalf("--around: exit %d: %s", code, stderr)
	}
	evs, smallSize := readChrome(t, small)
	if smallSize*10 > fullSize {
		t.Errorf("--around output %d bytes vs %d: not small", smallSize, fullSize)
	}
	kernels = 0
	var gap *chromeEvent
	for i, e := range evs {
		if e.Ph == "X" && e.Cat == "kernel" {
			kernels++
		}
		if e.Cat == "finding" && e.Args["rule"] == "kernel-gap" && e.Dur > 4000 {
			gap = &evs[i]
		}
	}
	if gap == nil {
		t.Fatalf("--around output lacks the gap evidence (stderr %s)", stderr)
	}
	if kernels == 0 || kernels > 100 {
		t.Errorf("--around kept %d kernels", kernels)
	}

	for _, args := range [][]string{
		{"export", in, "-o", filepath.Join(dir, "x")},                                   // no --to
		{"export", in, "--to", "csv", "-o", filepath.Join(dir, "x")},                    // bad --to
		{"export", in, "--to", "parquet"},                                               // no -o
		{"export", in, "--to", "perfetto", "--around", "kernel-gap", "--range", "1:2"},  // both
		{"export", in, "--to", "perfetto", "--around", "no-such-rule", "-o", small},     // unknown finding
		{"export", in, "--to", "perfetto", "--range", "5:1", "-o", small},               // bad range
		{"export", filepath.Join(dir, "missing.json"), "--to", "perfetto", "-o", small}, // missing input
	} {
		if code, _, stderr := runCLI(args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args[2:], code, stderr)
		}
	}
}

func TestDiffCmd(t *testing.T) {
	dir := t.TempDir()
	base := writeJob(t, filepath.Join(dir, "base.json"), 0, "Test GPU",
		[]kspec{{"sgemm", 0, 100}, {"relu", 110, 130}, {"sgemm", 140, 240}, {"relu", 250, 270}}, []float64{0, 135, 280})
	cand := writeJob(t, filepath.Join(dir, "cand.json"), 0, "Test GPU",
		[]kspec{{"sgemm", 0, 200}, {"relu", 210, 230}, {"sgemm", 730, 930}, {"relu", 940, 960}}, []float64{0, 235, 960})

	code, out, stderr := runCLI("diff", base, cand)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"comparable: yes", "sgemm", "+200.0µs", "+100.0%", "step time (p50)", "140.0µs", "480.0µs", "new in candidate (1)"} {
		if !strings.Contains(out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}

	code, out, stderr = runCLI("diff", base, cand, "--fail-on-regression", "5", "--format", "json")
	if code != 1 || !strings.Contains(stderr, "regression beyond --fail-on-regression 5%") {
		t.Errorf("gate: exit %d, stderr %s", code, stderr)
	}
	var doc struct {
		Regressed bool `json:"regressed"`
		Kernels   []struct {
			Name    string `json:"name"`
			DeltaNs int64  `json:"delta_ns"`
		} `json:"kernels"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || !doc.Regressed || doc.Kernels[0].Name != "sgemm" || doc.Kernels[0].DeltaNs != 200000 {
		t.Errorf("json: %v %+v", err, doc)
	}
	// Same run twice passes the gate; output is byte-identical across runs.
	code1, out1, _ := runCLI("diff", base, base, "--fail-on-regression", "1")
	_, out2, _ := runCLI("diff", base, base, "--fail-on-regression", "1")
	if code1 != 0 || out1 != out2 {
		t.Errorf("self diff: exit %d, deterministic %v", code1, out1 == out2)
	}

	// An unrelated run: other GPU, other kernels.
	other := writeJob(t, filepath.Join(dir, "other.json"), 0, "Other GPU",
		[]kspec{{"flash_fwd", 0, 50}, {"nccl_allreduce", 60, 90}}, nil)
	code, out, _ = runCLI("diff", base, other)
	if code != 0 || !strings.Contains(out, "WARNING not comparable: device names differ") || !strings.Contains(out, "kernel-name overlap 0.0%") {
		t.Errorf("unrelated: exit %d:\n%s", code, out)
	}

	// Ranks as comma-separated lists; junit to a file.
	base1 := writeJob(t, filepath.Join(dir, "base1.json"), 1, "Test GPU", []kspec{{"sgemm", 0, 100}}, nil)
	cand1 := writeJob(t, filepath.Join(dir, "cand1.json"), 1, "Test GPU", []kspec{{"sgemm", 0, 100}}, nil)
	xmlOut := filepath.Join(dir, "diff.xml")
	code, _, stderr = runCLI("diff", base+","+base1, cand+","+cand1, "--format", "junit", "-o", xmlOut)
	if code != 0 {
		t.Fatalf("ranks: exit %d: %s", code, stderr)
	}
	if data, err := os.ReadFile(xmlOut); err != nil || !bytes.Contains(data, []byte(`<testsuite name="tracedx diff"`)) {
		t.Errorf("junit file: %v\n%s", err, data)
	}

	// HTML: the page with the before/after plots.
	if code, out, stderr := runCLI("diff", base, cand, "--format", "html"); code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, `aria-label="Kernel time by class, base vs candidate"`) {
		t.Errorf("diff --format html: exit %d, stderr %q, page:\n%.300s", code, stderr, out)
	}

	for _, args := range [][]string{
		{"diff", base},
		{"diff", base, filepath.Join(dir, "missing.json")},
		{"diff", base, cand, "--format", "parquet"},
		{"diff", base, cand, "--fail-on-regression", "-3"},
		{"diff", base, cand, "--min-overlap", "2"},
	} {
		if code, _, stderr := runCLI(args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2", args[1:], code, stderr)
		}
	}
}
