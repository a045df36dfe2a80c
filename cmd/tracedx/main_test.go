package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/kinetogen"
)

var update = flag.Bool("update", false, "rewrite golden files and the bundled example")

// examplePath is the bundled example the README analyses.
var examplePath = filepath.Join("..", "..", "testdata", "example", "train-step.pt.trace.json.gz")

func exampleBytes(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := kinetogen.Write(&buf, fixture.Example(), kinetogen.Layout{TS: kinetogen.RelativeBase, Gzip: true}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestExampleUpToDate checks that the bundled example is what our generator
// writes (regenerate with go test ./cmd/tracedx -update).
func TestExampleUpToDate(t *testing.T) {
	got := exampleBytes(t)
	if *update {
		if err := os.WriteFile(examplePath, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(examplePath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go test ./cmd/tracedx -update", examplePath)
	}
}

// runTracedx runs the CLI in-process and returns its exit code and output.
func runTracedx(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func golden(t *testing.T, name string, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test ./cmd/tracedx -update and review)\n%s", name, got)
	}
}

func TestAnalyzeExample(t *testing.T) {
	for _, format := range []string{"text", "md", "json"} {
		code, out, errOut := runTracedx("analyze", examplePath, "--format", format)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		_, again, _ := runTracedx("analyze", examplePath, "--format", format)
		if out != again {
			t.Errorf("%s: two runs differ", format)
		}
		golden(t, "example."+format, strings.ReplaceAll(out, examplePath, "EXAMPLE"))
	}
}

func TestAnalyzeFindsPlantedFaults(t *testing.T) {
	_, out, _ := runTracedx("analyze", examplePath, "--format", "json")
	var doc struct {
		Findings []struct {
			Rule    string             `json:"rule"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	causes := map[string]bool{}
	for _, f := range doc.Findings {
		if f.Rule != "kernel-gap" {
			continue
		}
		for k, v := range f.Metrics {
			if strings.HasSuffix(k, "_count") && v > 0 {
				causes[strings.TrimSuffix(k, "_count")] = true
			}
		}
	}
	// The example's .item() and pageable-copy gaps are host-compute: the
	// sync waits 11 µs and the copy call covers 19% of its gap; the host
	// work around them is what the GPU waits for (see fixture.Example).
	for _, c := range []string{"host-compute", "comm-wait", "launch-bound"} {
		if !causes[c] {
			t.Errorf("kernel-gap did not attribute any gap to %s (got %v)", c, causes)
		}
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.bin")
	os.WriteFile(garbage, []byte("\x00\x01\x02 not a trace"), 0o644)
	truncated := filepath.Join(dir, "truncated.json")
	os.WriteFile(truncated, []byte(`{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2},`), 0o644)
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, nil, 0o644)
	fifo := filepath.Join(dir, "pipe.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"ok", []string{"analyze", examplePath}, 0, ""},
		{"gate", []string{"analyze", examplePath, "--fail-on", "warning"}, 1, "at or above --fail-on warning"},
		{"gate-none", []string{"analyze", examplePath, "--fail-on", "none"}, 0, ""},
		{"missing file", []string{"analyze", filepath.Join(dir, "nope.json")}, 2, "nope.json"},
		{"garbage", []string{"analyze", garbage}, 2, "garbage.bin"},
		{"truncated", []string{"analyze", truncated}, 2, "truncated.json"},
		{"empty", []string{"analyze", empty}, 2, "empty.json"},
		{"fifo does not hang", []string{"analyze", fifo}, 2, "not a regular file"},
		{"no args", []string{"analyze"}, 2, "missing"},
		{"bad flag", []string{"analyze", "--bogus", examplePath}, 2, "bogus"},
		{"bad format", []string{"analyze", examplePath, "--format", "pdf"}, 2, "pdf"},
		{"bad fail-on", []string{"analyze", examplePath, "--fail-on", "fatal"}, 2, "fatal"},
		{"bad param", []string{"analyze", examplePath, "--param", "kernel-gap.nope=1"}, 2, "no parameter nope"},
		{"unknown rule", []string{"rules", "explain", "nope"}, 2, "unknown rule"},
		{"info validate", []string{"info", examplePath, "--validate"}, 0, ""},
		{"rules", []string{"rules"}, 0, ""},
		{"explain", []string{"rules", "explain", "kernel-gap"}, 0, ""},
		{"version", []string{"version"}, 0, ""},
		{"completion", []string{"completion", "bash"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runTracedx(tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr: %s)", code, tc.code, errOut)
			}
			if tc.msg != "" && !strings.Contains(errOut, tc.msg) {
				t.Errorf("stderr %q lacks %q", errOut, tc.msg)
			}
			if tc.code == 2 && strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("error should be one line: %q", errOut)
			}
		})
	}
}

func TestOutputFileAtomic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.md")
	if code, _, e := runTracedx("analyze", examplePath, "--format", "md", "-o", out); code != 0 {
		t.Fatal(e)
	}
	b, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(b), "# tracedx report") {
		t.Fatalf("report file: %v %q", err, b)
	}
	// A failing run leaves no output behind.
	bad := filepath.Join(dir, "bad.md")
	if code, _, _ := runTracedx("analyze", filepath.Join(dir, "missing.json"), "-o", bad); code != 2 {
		t.Fatal("want exit 2")
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed run left %s", bad)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

func TestAnalyzeJUnit(t *testing.T) {
	code, out, errOut := runTracedx("analyze", examplePath, "--format", "junit", "--fail-on", "error")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (kernel-gap is an error): %s", code, errOut)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, out)
	}
	failed := map[string]bool{}
	for _, c := range doc.Suites[0].Cases {
		failed[c.Name] = c.Failure != nil
	}
	if len(doc.Suites) != 1 || !failed["kernel-gap"] || failed["memcpy"] || doc.Failures != 1 {
		t.Errorf("suites %d, failures %d, cases %v", len(doc.Suites), doc.Failures, failed)
	}
}

func TestInfo(t *testing.T) {
	code, out, _ := runTracedx("info", examplePath)
	if code != 0 || !strings.Contains(out, "format:       kineto") || !strings.Contains(out, "kernels") {
		t.Fatalf("info: %d %s", code, out)
	}
	code, out, _ = runTracedx("info", examplePath, "--json", "--validate")
	if code != 0 || !strings.Contains(out, `"valid": true`) {
		t.Fatalf("info --json: %d %s", code, out)
	}
}
