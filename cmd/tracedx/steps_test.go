package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/internal/kinetogen"
)

// TestStepsFlag: a custom step grammar names the steps of an engine the
// built-in grammars do not know; a bad expression is a usage error.
func TestStepsFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "engine.json")
	tr := fixture.Inference(path, fixture.Repeat(3, fixture.StepSpec{Name: "forward_decode_bs16", Kernels: []string{"gemm", "attn"}, KernelUS: 40, GapAfterUS: 20}))
	if err := kinetogen.WriteFile(path, tr, kinetogen.Layout{TS: kinetogen.FloatEpochNs}); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCLI("analyze", path, "--format", "json", "--steps", `^forward_(?P<phase>decode|prefill)_bs(?P<bs>\d+)$`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Steps []struct {
			Phase     string `json:"phase"`
			BatchSize *int64 `json:"batch_size"`
			Engine    string `json:"engine"`
			Kernels   *int64 `json:"kernels"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Steps) != 3 || rep.Steps[0].Phase != "decode" || rep.Steps[0].BatchSize == nil || *rep.Steps[0].BatchSize != 16 ||
		rep.Steps[0].Engine != "custom" || rep.Steps[0].Kernels == nil || *rep.Steps[0].Kernels != 2 {
		t.Errorf("steps: %+v", rep.Steps)
	}
	if code, _, stderr := runCLI("analyze", path, "--steps", "("); code != 2 || stderr == "" {
		t.Errorf("bad --steps: exit %d, stderr %q", code, stderr)
	}
}
