package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Non-finite and out-of-range numbers on the command line and in policies
// are usage errors naming the flag or the policy line (NaN used to become
// -9.2e18 ns).
func TestRejectNonFiniteValues(t *testing.T) {
	needImporters(t)
	dir := t.TempDir()
	trace := filepath.Join(dir, "rank0.pt.trace.json")
	writeKinetoTrace(t, trace, 10, 30, false)
	nanGate := writePolicy(t, filepath.Join(dir, "nangate.yaml"), "gates:\n  - metric: gpu.idle_pct\n    max: .nan\n")
	infParam := writePolicy(t, filepath.Join(dir, "infparam.yaml"), "rules:\n  kernel-gap:\n    params:\n      min_gap_us: .inf\n")
	negParam := writePolicy(t, filepath.Join(dir, "negparam.yaml"), "rules:\n  kernel-gap:\n    params:\n      warn_pct: -1\n")
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"analyze", trace, "--param", "kernel-gap.min_gap_us=NaN"}, `--param "kernel-gap.min_gap_us=NaN": NaN is not a finite number`},
		{[]string{"analyze", trace, "--param", "kernel-gap.min_gap_us=Inf"}, `--param "kernel-gap.min_gap_us=Inf": +Inf is not a finite number`},
		{[]string{"analyze", trace, "--param", "kernel-gap.min_gap_us=-1"}, `must not be negative`},
		{[]string{"analyze", trace, "--param", "kernel-gap.min_gap_us=1e300"}, `µs is out of range`},
		{[]string{"diff", trace, trace, "--fail-on-regression", "NaN"}, `--fail-on-regression NaN`},
		{[]string{"diff", trace, trace, "--fail-on-regression", "+Inf"}, `--fail-on-regression +Inf`},
		{[]string{"diff", trace, trace, "--min-overlap", "NaN"}, `--min-overlap NaN`},
		{[]string{"analyze", trace, "--policy", nanGate}, "nangate.yaml:3: gate 1 (gpu.idle_pct): max: NaN is not a finite number"},
		{[]string{"analyze", trace, "--policy", infParam}, "infparam.yaml:4: rule kernel-gap parameter min_gap_us: +Inf is not a finite number"},
		{[]string{"batch", trace, "--out", filepath.Join(dir, "out"), "--policy", negParam}, "negparam.yaml:4: rule kernel-gap parameter warn_pct: -1 must not be negative"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != exitInput || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args[1:], code, stderr, tc.stderr)
		}
	}
}

// TestMaxNameBytesFlag: --max-name-bytes applies to reports and to the
// Perfetto export alike (0 = no cap; below 64 is refused).
func TestMaxNameBytesFlag(t *testing.T) {
	dir := t.TempDir()
	long := "kernel_" + strings.Repeat("z", 20000)
	trace := writeJob(t, filepath.Join(dir, "long.json"), 0, "Test GPU", []kspec{{long, 0, 100}}, nil)
	tag := "…[20007 bytes, sha256 "
	for _, tc := range []struct {
		args  []string
		whole bool
	}{
		{[]string{"export", trace, "--to", "perfetto", "-o", "-"}, false},
		{[]string{"export", trace, "--to", "perfetto", "-o", "-", "--max-name-bytes", "0"}, true},
		{[]string{"analyze", trace, "-f", "md", "--detail", "full", "--max-name-bytes", "100"}, false},
		{[]string{"analyze", trace, "-f", "md", "--detail", "full", "--max-name-bytes", "0"}, true},
	} {
		code, out, stderr := runCLI(tc.args...)
		if code != 0 || strings.Contains(out, long) != tc.whole || !tc.whole && !strings.Contains(out, tag) {
			t.Errorf("%v: exit %d (%s), whole name %v, tag %v", tc.args[2:], code, stderr, strings.Contains(out, long), strings.Contains(out, tag))
		}
	}
	if code, _, _ := runCLI("export", trace, "--to", "perfetto", "-o", "-", "--max-name-bytes", "10"); code != exitInput {
		t.Errorf("--max-name-bytes 10: exit %d, want 2", code)
	}
}

// TestWarningsBounded: a 200,000-digit timestamp no longer makes a warning
// line as long as the number, in info or in a report.
func TestWarningsBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.json")
	doc := `{"schemaVersion":1,"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1` +
		strings.Repeat("9", 200000) + `,"dur":5,"args":{"device":0,"stream":7}}]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"info", path}, {"analyze", path, "-f", "md"}, {"analyze", path, "-f", "json"}} {
		code, out, stderr := runCLI(args...)
		if code != 0 || !strings.Contains(out, `bad ts`) || len(out)+len(stderr) > 20000 {
			t.Errorf("%v: exit %d, %d bytes of output, warning shown %v", args, code, len(out)+len(stderr), strings.Contains(out, `bad ts`))
		}
	}
}
