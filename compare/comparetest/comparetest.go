// Package comparetest builds the small base/candidate pairs that the tests of
// compare and of its renderers (export/diffreport) share. Test support only.
package comparetest

import (
	"github.com/tracedx/tracedx/compare"
	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/breakdown"
	"github.com/tracedx/tracedx/detectors/kernelgap"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// Kern is one kernel of a fixture: name and [start, end) in µs.
type Kern struct {
	Name       string
	Start, End float64
}

// Job builds a one-rank trace on "Test GPU" with the kernels launched from
// one thread 5µs before they start, and step ranges [steps[i], steps[i+1]).
func Job(path string, ks []Kern, steps []float64) *model.Trace {
	b := fixture.New(path, model.FormatKineto)
	b.T.Rank = 0
	th := b.Thread(1, "main")
	for _, k := range ks {
		b.Kernel(0, 7, k.Name, k.Start, k.End, th, k.Start-5)
	}
	for i := 0; i+1 < len(steps); i++ {
		b.Range(th, model.RangeStep, "ProfilerStep#"+string(rune('1'+i)), steps[i], steps[i+1])
	}
	return b.Build()
}

// Analyse is the pipeline's analysis reduced to what diff reads: the
// breakdown and the kernel-gap rule.
func Analyse(t *model.Trace) compare.Side {
	set := fixture.Set(t)
	r := &model.Report{Inputs: []model.Input{{Path: t.Path, Format: t.Format, Rank: t.Rank}}}
	r.Devices, r.Kernels = breakdown.Compute(set, breakdown.WindowTrace)
	res := detectors.Run(set, []*detectors.Detector{kernelgap.Detector}, detectors.Config{})
	r.Findings, r.NotMeasurable = res.Findings, res.NotMeasurable
	return compare.Side{Report: r, Set: set}
}

// BasePair: the base runs sgemm (100µs) and relu (20µs) twice with 10µs gaps; the
// candidate's sgemm is 2x slower and a 500µs gap opens before the second
// iteration.
func BasePair() (compare.Side, compare.Side) {
	base := Job("base.json", []Kern{{"sgemm", 0, 100}, {"relu", 110, 130}, {"sgemm", 140, 240}, {"relu", 250, 270}},
		[]float64{0, 135, 280})
	cand := Job("cand.json", []Kern{{"sgemm", 0, 200}, {"relu", 210, 230}, {"sgemm", 730, 930}, {"relu", 940, 960}},
		[]float64{0, 235, 960})
	return Analyse(base), Analyse(cand)
}

// RenderPair is BasePair with findings fixed here, so that the golden
// files do not change with the detectors' wording.
func RenderPair() (compare.Side, compare.Side) {
	b, c := BasePair()
	gap := func(sev model.Severity, title string, total float64) model.Finding {
		return model.Finding{Rule: "kernel-gap", Severity: sev, Title: title, Message: "gaps",
			Metrics: []model.Metric{{Name: "gap_total_ns", Value: total, Unit: "ns"}}}
	}
	b.Report.Findings = []model.Finding{gap(model.SevInfo, "idle 0.0% in 0 gaps", 0),
		{Rule: "sync-api", Severity: model.SevWarning, Title: "3 host syncs in the steady state"}}
	c.Report.Findings = []model.Finding{gap(model.SevError, "idle 52.1% in 1 gaps", 500000),
		{Rule: "memcpy", Severity: model.SevWarning, Title: "pageable copies"}}
	b.Report.NotMeasurable, c.Report.NotMeasurable = nil, nil
	return b, c
}
