package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchRerunInsideInputs: `batch d --out d/out` run three times reads
// the same two inputs each time (it used to read its own reports and state
// files as Kineto traces: 2 → 8 → 26 inputs), and a report or Perfetto
// export tracedx wrote into d is not an input either.
func TestBatchRerunInsideInputs(t *testing.T) {
	needImporters(t)
	d := t.TempDir()
	writeKinetoTrace(t, filepath.Join(d, "r0.pt.trace.json"), 10, 30, false)
	writeKinetoTrace(t, filepath.Join(d, "r1.pt.trace.json"), 10, 30, false)
	if code, _, stderr := runCLI("analyze", filepath.Join(d, "r0.pt.trace.json"), "-f", "json", "-o", filepath.Join(d, "report.json")); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := runCLI("export", filepath.Join(d, "r0.pt.trace.json"), "--to", "perfetto", "-o", filepath.Join(d, "timeline.json")); code != 0 {
		t.Fatal(stderr)
	}
	for i := range 3 {
		code, out, stderr := runCLI("batch", d, "--out", filepath.Join(d, "out"), "-q")
		if code != 0 || !strings.Contains(out, "2 inputs: 2 ok") {
			t.Fatalf("run %d: exit %d\n%s%s", i+1, code, out, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(d, "out", ".tracedx-output")); err != nil {
		t.Error(err)
	}
}
