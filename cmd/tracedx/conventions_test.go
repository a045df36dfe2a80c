package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	code, out, _ := runCLI("version")
	if code != 0 || !strings.HasPrefix(out, "tracedx ") || !strings.Contains(out, "go:") {
		t.Errorf("version: %d %q", code, out)
	}
	code, out, _ = runCLI("version", "-o", "json")
	var b buildInfo
	if err := json.Unmarshal([]byte(out), &b); code != 0 || err != nil || b.Version == "" || b.GoVersion == "" {
		t.Errorf("version -o json: %d %v %q", code, err, out)
	}
	if code, _, _ := runCLI("version", "-o", "yaml"); code != exitInput {
		t.Errorf("version -o yaml: exit %d, want 2", code)
	}
	// -v is not --version; --version still works.
	if code, out, stderr := runCLI("-v"); code != exitInput || out != "" || !strings.Contains(stderr, "unknown shorthand flag: 'v'") {
		t.Errorf("-v: exit %d %q %q", code, out, stderr)
	}
	if code, out, _ := runCLI("--version"); code != 0 || !strings.HasPrefix(out, "tracedx ") {
		t.Errorf("--version: exit %d %q", code, out)
	}
	// The commit and date come from the build info of a checkout build;
	// the module version from a `go install …@vX.Y.Z` build.
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/tracedx/tracedx", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	got := fromBuildInfo(bi)
	if got.Version != "v1.2.3" || got.Commit != "abc123" || got.Date != "2026-12-01T10:00:00Z" || !got.Modified {
		t.Errorf("fromBuildInfo: %+v", got)
	}
}

func TestQuietVerbose(t *testing.T) {
	needImporters(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "rank0.pt.trace.json")
	writeKinetoTrace(t, trace, 10, 30, false)
	out := filepath.Join(dir, "out.json")
	if code, _, stderr := runCLI("export", trace, "--to", "perfetto", "-o", out); code != 0 || !strings.Contains(stderr, "export: wrote") {
		t.Errorf("export: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI("export", trace, "--to", "perfetto", "-o", out, "--quiet"); code != 0 || stderr != "" {
		t.Errorf("export --quiet: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI("batch", trace, "--out", filepath.Join(dir, "b"), "-q"); code != 0 || stderr != "" {
		t.Errorf("batch -q: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runCLI("analyze", trace, "--verbose"); code != 0 || !strings.Contains(stderr, "tracedx: finished in ") {
		t.Errorf("analyze --verbose: exit %d, stderr %q", code, stderr)
	}
	if code, _, _ := runCLI("analyze", trace, "--verbose", "--quiet"); code != exitInput {
		t.Errorf("--verbose --quiet: exit %d, want 2", code)
	}
}

// TestNoANSI: progress written to something that is not a terminal (a
// buffer, a file, a CI log) never holds terminal control codes.
func TestNoANSI(t *testing.T) {
	needImporters(t)
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "in"), 0o755)
	for i := range 3 {
		writeKinetoTrace(t, filepath.Join(dir, "in", "r"+string(rune('0'+i))+".pt.trace.json"), 10, 30, false)
	}
	t.Setenv("TERM", "xterm-256color")
	code, out, stderr := runCLI("batch", filepath.Join(dir, "in"), "--out", filepath.Join(dir, "out"))
	if code != 0 || strings.ContainsRune(stderr+out, 0x1b) {
		t.Errorf("batch: exit %d, ANSI in output:\n%q\n%q", code, out, stderr)
	}
	t.Setenv("NO_COLOR", "1")
	if colorAllowed() {
		t.Error("NO_COLOR set: color allowed")
	}
	os.Unsetenv("NO_COLOR")
	t.Setenv("TERM", "dumb")
	if colorAllowed() {
		t.Error("TERM=dumb: color allowed")
	}
}

func TestInfoFormat(t *testing.T) {
	needImporters(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "rank0.pt.trace.json")
	writeKinetoTrace(t, trace, 10, 30, false)
	for _, args := range [][]string{{"--format", "json"}, {"-f", "json"}, {"--json"}} {
		code, out, stderr := runCLI(append([]string{"info", trace}, args...)...)
		var v infoJSON
		if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil || v.Format != "kineto" {
			t.Errorf("info %v: exit %d, %v, %q %q", args, code, err, out, stderr)
		}
	}
	if code, _, _ := runCLI("info", trace, "--format", "xml"); code != exitInput {
		t.Errorf("info --format xml: exit %d, want 2", code)
	}
	if _, out, _ := runCLI("info", "--help"); strings.Contains(out, "--json") {
		t.Errorf("--json is shown in help:\n%s", out)
	}
}

func TestValueCompletions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "analyze", "--disable", "kernel-g"}, []string{"kernel-gap\t"}},
		{[]string{"__complete", "batch", "--param", "kernel-g"}, []string{"kernel-gap."}},
		{[]string{"__complete", "diff", "--param", "kernel-gap.min"}, []string{"kernel-gap.min_gap_us=\tdefault 50 µs"}},
		{[]string{"__complete", "export", "--input-format", ""}, []string{"kineto", "nsys", "nccl-tests"}},
		{[]string{"__complete", "info", "--input-format", ""}, []string{"kineto"}},
	} {
		code, out, _ := runCLI(tc.args...)
		for _, w := range tc.want {
			if code != 0 || !strings.Contains(out, w) {
				t.Errorf("%v: exit %d, %q; want %q", tc.args[1:], code, out, w)
			}
		}
	}
}

func TestDocs(t *testing.T) {
	dir := t.TempDir()
	for _, kind := range []string{"man", "md"} {
		a, b := filepath.Join(dir, kind+"1"), filepath.Join(dir, kind+"2")
		t.Setenv("SOURCE_DATE_EPOCH", "1780272000")
		for _, d := range []string{a, b} {
			if code, _, stderr := runCLI("docs", kind, d); code != 0 {
				t.Fatalf("docs %s: exit %d %s", kind, code, stderr)
			}
		}
		ents, _ := os.ReadDir(a)
		if len(ents) < 10 {
			t.Errorf("docs %s: %d files", kind, len(ents))
		}
		for _, e := range ents {
			x, _ := os.ReadFile(filepath.Join(a, e.Name()))
			y, _ := os.ReadFile(filepath.Join(b, e.Name()))
			if string(x) != string(y) || len(x) == 0 {
				t.Errorf("docs %s: %s differs between runs or is empty", kind, e.Name())
			}
		}
	}
	if code, _, _ := runCLI("docs", "pdf", dir); code != exitInput {
		t.Errorf("docs pdf: exit %d, want 2", code)
	}
}
