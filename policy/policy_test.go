package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	detall "github.com/tracedx/tracedx/detectors/all"
	"github.com/tracedx/tracedx/model"
)

const good = `version: 1
rules:
  kernel-gap:
    params: {min_gap_us: 100}
    severity: error
  gil-stall:
    enabled: false
disabled: [sync-api]
gates:
  - metric: gpu.idle_pct
    max: 20
  - metric: nccl.all_reduce.peak_busbw_gbps
    min: 150
  - metric: findings.error
    max: 0
    name: no errors
  - metric: finding.kernel-gap.idle_ms
    max: 5
    optional: true
`

func TestParseGood(t *testing.T) {
	p, err := Parse("good.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	cfg := p.DetectorConfig()
	if got := cfg.Params["kernel-gap"]["min_gap_us"]; got != 100 {
		t.Errorf("min_gap_us = %v", got)
	}
	if cfg.Severity["kernel-gap"] != model.SevError {
		t.Errorf("severity = %v", cfg.Severity["kernel-gap"])
	}
	if !cfg.Disabled["gil-stall"] || !cfg.Disabled["sync-api"] || cfg.Disabled["kernel-gap"] {
		t.Errorf("disabled = %v", cfg.Disabled)
	}
	if len(p.Gates) != 4 {
		t.Fatalf("gates = %d", len(p.Gates))
	}
	if p.Gates[0].Line != 10 || p.Gates[1].Line != 12 {
		t.Errorf("gate lines = %d, %d", p.Gates[0].Line, p.Gates[1].Line)
	}
	if c := p.Gates[0].Condition(); c != "gpu.idle_pct <= 20" {
		t.Errorf("condition = %q", c)
	}
	if p.Gates[2].Label() != "no errors" {
		t.Errorf("label = %q", p.Gates[2].Label())
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"unknown top key", "rules: {}\ngatez: []\n", "bad.yaml:2: unknown key \"gatez\""},
		{"unknown rule key", "rules:\n  kernel-gap:\n    parms: {a: 1}\n", "bad.yaml:3: unknown key \"parms\""},
		{"unknown gate key", "gates:\n  - metric: gpu.idle_pct\n    maximum: 3\n", "bad.yaml:3: unknown key \"maximum\""},
		{"bad severity", "rules:\n  kernel-gap:\n    severity: fatal\n", "bad.yaml:3: rule kernel-gap: unknown severity"},
		{"no limit", "gates:\n  - metric: gpu.idle_pct\n", "bad.yaml:2: gate 1 (gpu.idle_pct) has neither min nor max"},
		{"bad metric", "gates:\n  - max: 1\n    metric: cpu.load\n", "bad.yaml:3: gate 1: unknown metric \"cpu.load\""},
		{"min above max", "gates:\n  - metric: gpu.idle_pct\n    min: 5\n    max: 1\n", "bad.yaml:2: gate 1 (gpu.idle_pct): min 5 is above max 1"},
		{"bad number", "rules:\n  kernel-gap:\n    params: {min_gap_us: lots}\n", "bad.yaml:3: cannot unmarshal"},
		{"syntax", "rules: [\n", "bad.yaml:"},
		{"version", "version: 7\n", "bad.yaml:1: unsupported policy version 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.text))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadFileAndExample(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(path, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(dir, "missing.yaml")); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Errorf("missing file error = %v", err)
	}
	// The shipped example must stay valid, against the real rule catalogue.
	ex, err := Load(filepath.Join("..", "examples", "policy.yaml"))
	if err != nil {
		t.Errorf("examples/policy.yaml: %v", err)
	} else if err := ex.Check(detall.Detectors()); err != nil {
		t.Errorf("examples/policy.yaml: %v", err)
	}
	// An empty file is an empty policy.
	p, err := Parse("empty.yaml", nil)
	if err != nil || len(p.Gates) != 0 {
		t.Errorf("empty policy: %v %v", p, err)
	}
}

func TestCheckAgainstCatalogue(t *testing.T) {
	p, err := Parse("p.yaml", []byte("rules:\n  kernel-gap:\n    params:\n      min_gap_us: 1\n      min_gap_ms: 2\n  no-such-rule:\n    enabled: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	list := []*detectors.Detector{{ID: "kernel-gap", Params: []detectors.Param{{Name: "min_gap_us", Default: 50, Doc: "x"}}}}
	err = p.Check(list)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`p.yaml:5: rule kernel-gap has no parameter "min_gap_ms"`, `p.yaml:6: unknown rule "no-such-rule"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
}

func testReport() *model.Report {
	return &model.Report{
		Inputs: []model.Input{{Path: "a.json", Format: model.FormatKineto, Rank: 0}},
		Devices: []model.DeviceSummary{
			{Rank: 0, Device: 0, Span: 100e6, Busy: 90e6, Idle: 10e6, Compute: 80e6, NonCompute: 10e6, Kernels: 10},
			{Rank: 0, Device: 1, Span: 100e6, Busy: 70e6, Idle: 30e6, Compute: 60e6, NonCompute: 10e6, Kernels: 7},
		},
		Kernels: []model.KernelSummary{{Name: "gemm", Count: 17, Total: 140e6}},
		Findings: []model.Finding{
			{Rule: "kernel-gap", Severity: model.SevWarning, Metrics: []model.Metric{{Name: "idle_ms", Value: 30}},
				Evidence: []model.Evidence{{Rank: 0, Device: 1}}},
		},
		NotMeasurable: []model.NotMeasurable{{Rule: "gil-stall", Reason: "no GIL"}},
		Bench: []model.InputBench{{Path: "n.log", Bench: &model.Bench{Runs: []model.BenchRun{{
			Collective: "all_reduce", ReportedAvgBusBW: 100,
			Rows: []model.BenchRow{
				{SizeBytes: 8, OutOfPlace: model.BenchResult{Present: true, BusBWGBps: 1, Wrong: 0}, InPlace: model.BenchResult{Present: true, BusBWGBps: 2}},
				{SizeBytes: 1 << 30, OutOfPlace: model.BenchResult{Present: true, BusBWGBps: 180.5}, InPlace: model.BenchResult{Present: true, BusBWGBps: 181.25, Wrong: -1}},
			}}}}}},
	}
}

func TestMetrics(t *testing.T) {
	ms := Metrics(testReport())
	get := func(name, scope string) (float64, bool) {
		for _, s := range ms {
			if s.Name == name && s.Scope == scope {
				return s.Value, true
			}
		}
		return 0, false
	}
	for _, tc := range []struct {
		name, scope string
		want        float64
	}{
		{"gpu.idle_pct", "rank0/gpu0", 10},
		{"gpu.idle_pct", "rank0/gpu1", 30},
		{"gpu.compute_pct", "rank0/gpu1", 60},
		{"gpu.busy_ms", "rank0/gpu0", 90},
		{"kernels.count", "", 17},
		{"findings.warning", "", 1},
		{"findings.error", "", 0},
		{"finding.kernel-gap.count", "", 1},
		{"finding.kernel-gap.idle_ms", "rank0/gpu1 #1", 30},
		{"nccl.all_reduce.peak_busbw_gbps", "all_reduce run 1", 181.25},
		{"nccl.all_reduce.avg_busbw_gbps", "all_reduce run 1", 100},
		{"nccl.all_reduce.wrong", "all_reduce run 1", 0},
		{"warnings.count", "", 0},
	} {
		got, ok := get(tc.name, tc.scope)
		if !ok || got != tc.want {
			t.Errorf("%s[%s] = %v, %v; want %v", tc.name, tc.scope, got, ok, tc.want)
		}
	}
	if _, ok := get("finding.gil-stall.count", ""); ok {
		t.Error("a not-measurable rule must have no count")
	}
	for _, s := range ms {
		if !ValidMetricName(s.Name) {
			t.Errorf("metric %q outside the namespace", s.Name)
		}
	}
}

func TestEvaluate(t *testing.T) {
	p, err := Parse("p.yaml", []byte(`gates:
  - metric: gpu.idle_pct
    max: 20
  - metric: gpu.idle_pct
    max: 50
  - metric: nccl.all_reduce.peak_busbw_gbps
    min: 150
  - metric: findings.error
    max: 0
  - metric: finding.gil-stall.count
    max: 0
  - metric: finding.gil-stall.count
    max: 0
    optional: true
  - metric: gpu.compute_pct
    min: 70
`))
	if err != nil {
		t.Fatal(err)
	}
	rs := p.Evaluate(testReport())
	want := []struct {
		passed, measurable, skipped bool
		measured                    float64
		scope, msg                  string
	}{
		{false, true, false, 30, "rank0/gpu1", "gpu.idle_pct = 30 (rank0/gpu1) is above the limit 20 (2 samples)"},
		{true, true, false, 30, "rank0/gpu1", "within gpu.idle_pct <= 50"},
		{true, true, false, 181.25, "all_reduce run 1", "within"},
		{true, true, false, 0, "", "findings.error = 0 is within findings.error <= 0"},
		{false, false, false, 0, "", "not measurable"},
		{true, false, true, 0, "", "not measurable on this input (optional gate skipped)"},
		{false, true, false, 60, "rank0/gpu1", "gpu.compute_pct = 60 (rank0/gpu1) is below the limit 70"},
	}
	if len(rs) != len(want) {
		t.Fatalf("%d results", len(rs))
	}
	for i, w := range want {
		r := rs[i]
		if r.Passed != w.passed || r.Measurable != w.measurable || r.Skipped != w.skipped || r.Measured != w.measured || r.Scope != w.scope || !strings.Contains(r.Message, w.msg) {
			t.Errorf("gate %d: %+v; want %+v", i, r, w)
		}
	}
	if AllPassed(rs) {
		t.Error("AllPassed = true")
	}
	if !AllPassed(rs[1:4]) {
		t.Error("AllPassed(passing) = false")
	}
	var nilPolicy *Policy
	if nilPolicy.Evaluate(testReport()) != nil {
		t.Error("nil policy has gates")
	}
}
