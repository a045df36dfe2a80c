package compare_test

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/compare/comparetest"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func TestKnownChanges(t *testing.T) {
	b, c := comparetest.BasePair()
	res := compare.Compare(b, c, compare.Options{FailPct: 5})
	if !res.Comparable {
		t.Errorf("not comparable: %v", res.Problems)
	}
	us := func(v float64) model.Duration { return model.Duration(v * 1000) }
	want := map[string][2]model.Duration{
		compare.QSpan:      {us(270), us(960)},
		compare.QBusy:      {us(240), us(440)},
		compare.QIdle:      {us(30), us(520)},
		compare.QKernelGap: {0, us(500)},
		compare.QStep:      {us(140), us(480)}, // medians of (135, 145) and (235, 725)
	}
	for name, w := range want {
		q, ok := res.Quantity(name)
		if !ok || !q.Known || q.Base != w[0] || q.Cand != w[1] {
			t.Errorf("%s = %+v, want base %s cand %s", name, q, w[0], w[1])
		}
	}
	if len(res.Kernels) != 2 {
		t.Fatalf("kernels: %+v", res.Kernels)
	}
	k := res.Kernels[0]
	if p, _ := k.Pct(); k.Name != "sgemm" || k.BaseCount != 2 || k.CandCount != 2 || k.BaseTotal != us(200) || k.CandTotal != us(400) || k.Delta() != us(200) || p != 100 {
		t.Errorf("sgemm delta = %+v", k)
	}
	if k := res.Kernels[1]; k.Name != "relu" || k.Delta() != 0 {
		t.Errorf("relu delta = %+v", k)
	}
	if len(res.Devices) != 1 {
		t.Fatalf("devices: %+v", res.Devices)
	}
	if b, c := res.Devices[0].Class("compute"); b != us(240) || c != us(440) {
		t.Errorf("compute %s → %s", b, c)
	}
	var regressed []string
	for _, r := range res.Regressions {
		regressed = append(regressed, r.Quantity)
	}
	if strings.Join(regressed, ",") != "span,gpu_busy,step_time" {
		t.Errorf("regressions = %v", regressed)
	}
	// The candidate's gap finding is new (severity rises to error: 52% idle).
	if len(res.NewFindings) == 0 || res.NewFindings[0].Rule != "kernel-gap" {
		t.Errorf("new findings = %+v", res.NewFindings)
	}
	// Same pair, no gate: nothing regressed; same side twice: no deltas at all.
	if r := compare.Compare(b, c, compare.Options{}); r.Regressed() {
		t.Error("regressed without a gate")
	}
	same := compare.Compare(b, b, compare.Options{FailPct: 1})
	if same.Regressed() || len(same.NewFindings)+len(same.Resolved) != 0 || same.Kernels[0].Delta() != 0 {
		t.Errorf("self-compare: %+v", same)
	}
}

func TestNotComparable(t *testing.T) {
	b, _ := comparetest.BasePair()
	other := fixture.New("other.json", model.FormatNsys)
	other.T.Devices[0].Name = "Other GPU"
	other.Device(1, "Other GPU")
	th := other.Thread(1, "main")
	other.Kernel(0, 1, "ncclKernel", 0, 50, th, 0)
	other.Kernel(1, 1, "flash_fwd", 0, 50, th, 0)
	other.Kernel(1, 1, "sgemm", 60, 70, th, 55)
	o := comparetest.Analyse(other.Build())
	res := compare.Compare(b, o, compare.Options{})
	if res.Comparable || len(res.Problems) != 2 {
		t.Fatalf("problems = %v", res.Problems)
	}
	if !strings.Contains(res.Problems[0], "base has 1 device(s), candidate 2") ||
		!strings.Contains(res.Problems[1], "kernel-name overlap 25.0% is below 50.0%") {
		t.Errorf("problems = %v", res.Problems)
	}
}

func TestStepFromStepModel(t *testing.T) {
	b, c := comparetest.BasePair()
	// Decode steps win over the prefill steps both sides also have.
	b.Report.StepPhases = []model.PhaseStats{{Phase: model.PhasePrefill, Count: 2, P50: 9000}, {Phase: model.PhaseDecode, Count: 40, P50: 1000}}
	c.Report.StepPhases = []model.PhaseStats{{Phase: model.PhasePrefill, Count: 3, P50: 9500}, {Phase: model.PhaseDecode, Count: 38, P50: 1500}}
	q, _ := compare.Compare(b, c, compare.Options{}).Quantity(compare.QStep)
	if q.Base != 1000 || q.Cand != 1500 || q.Source != "p50 of 40 / 38 decode steps" {
		t.Errorf("step = %+v", q)
	}
	b.Set, c.Set = nil, nil
	b.Report.StepPhases, c.Report.StepPhases = nil, nil
	if q, _ := compare.Compare(b, c, compare.Options{}).Quantity(compare.QStep); q.Known {
		t.Errorf("step known without markers: %+v", q)
	}
}
