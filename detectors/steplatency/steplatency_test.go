package steplatency

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

const decodeName = "execute_8_context_0(sq0sk0sqsq0sqsk0)_generation_8(sq8sk4000sqsq8sqsk4000)"
const mixedName = "execute_520_context_1(sq512sk512sqsq262144sqsk262144)_generation_8(sq8sk4000sqsq8sqsk4000)"

func decode(gap float64) fixture.StepSpec {
	return fixture.StepSpec{Name: decodeName, Kernels: []string{"gemm", "attn", "gemm", "norm"}, KernelUS: 50, Graph: true, GapAfterUS: gap}
}

func analyse(t *testing.T, ts ...*model.Trace) detectors.Result {
	t.Helper()
	return detectors.Run(fixture.Set(ts...), []*detectors.Detector{Detector}, detectors.Config{})
}

func titles(r detectors.Result) string {
	var s []string
	for _, f := range r.Findings {
		s = append(s, f.Severity.String()+":"+f.Title)
	}
	return strings.Join(s, ";")
}

func TestPlantedSchedulerGapsAndOutliers(t *testing.T) {
	specs := fixture.Repeat(20, decode(150)) // 150 µs of host time after each ~212 µs step
	slow := decode(150)
	slow.Kernels = append(slow.Kernels, "gemm", "gemm", "gemm", "gemm", "gemm", "gemm", "gemm", "gemm", "gemm", "gemm")
	specs[5], specs[12] = slow, slow
	res := analyse(t, fixture.Inference("loop.json", specs))
	got := titles(res)
	if !strings.Contains(got, "warning:Host time between decode steps") || !strings.Contains(got, "Slow decode steps") {
		t.Fatalf("findings: %s\n%+v", got, res.Findings)
	}
	for _, f := range res.Findings {
		if f.Title == "Host time between decode steps" {
			if m, _ := f.Metric("idle_pct"); m.Value < 30 || m.Value > 45 {
				t.Errorf("idle share %.1f%%", m.Value)
			}
		}
		if f.Title == "Slow decode steps" {
			if m, _ := f.Metric("outliers"); m.Value != 2 {
				t.Errorf("outliers %v", m.Value)
			}
		}
	}
}

func TestPlantedPrefillInterferenceAndImbalance(t *testing.T) {
	specs := fixture.Repeat(10, decode(5))
	specs = append(specs, fixture.StepSpec{Name: mixedName, Kernels: []string{"gemm", "attn", "gemm"}, KernelUS: 400, GapAfterUS: 5})
	r0 := fixture.Inference("rank0.json", specs)
	slow := fixture.Repeat(10, decode(5))
	for i := range slow {
		slow[i].KernelUS = 80
	}
	r1 := fixture.Inference("rank1.json", slow)
	r1.Rank = 1
	got := titles(analyse(t, r0, r1))
	if !strings.Contains(got, "info:Prefill chunks stall decode") || !strings.Contains(got, "warning:Unequal decode step time across ranks") {
		t.Fatalf("findings: %s", got)
	}
}

func TestCleanTightDecodeLoop(t *testing.T) {
	res := analyse(t, fixture.Inference("loop.json", fixture.Repeat(30, decode(5))))
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 0 {
		t.Fatalf("want silence: %+v %+v", res.Findings, res.NotMeasurable)
	}
}

func TestNoSteps(t *testing.T) {
	b := fixture.New("x.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Range(th, model.RangeUser, "forward", 0, 10)
	res := analyse(t, b.Build())
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 0 {
		t.Fatalf("a trace without engine steps is none of this rule's business: %+v %+v", res.Findings, res.NotMeasurable)
	}
}
