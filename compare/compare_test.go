package compare

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/breakdown"
	"github.com/tracedx/tracedx/detectors/kernelgap"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

// kern is one kernel of a fixture: name and [start, end) in µs.
type kern struct {
	name       string
	start, end float64
}

// job builds a one-rank trace on "Test GPU" with the kernels launched from
// one thread 5µs before they start, and step ranges [steps[i], steps[i+1]).
func job(path string, ks []kern, steps []float64) *model.Trace {
	b := fixture.New(path, model.FormatKineto)
	b.T.Rank = 0
	th := b.Thread(1, "main")
	for _, k := range ks {
		b.Kernel(0, 7, k.name, k.start, k.end, th, k.start-5)
	}
	for i := 0; i+1 < len(steps); i++ {
		b.Range(th, model.RangeStep, "ProfilerStep#"+string(rune('1'+i)), steps[i], steps[i+1])
	}
	return b.Build()
}

// analyse is the pipeline's analysis reduced to what diff reads: the
// breakdown and the kernel-gap rule.
func analyse(t *model.Trace) Side {
	set := fixture.Set(t)
	r := &model.Report{Inputs: []model.Input{{Path: t.Path, Format: t.Format, Rank: t.Rank}}}
	r.Devices, r.Kernels = breakdown.Compute(set, breakdown.WindowTrace)
	res := detectors.Run(set, []*detectors.Detector{kernelgap.Detector}, detectors.Config{})
	r.Findings, r.NotMeasurable = res.Findings, res.NotMeasurable
	return Side{Report: r, Set: set}
}

// The base runs sgemm (100µs) and relu (20µs) twice with 10µs gaps; the
// candidate's sgemm is 2x slower and a 500µs gap opens before the second
// iteration.
func basePair() (Side, Side) {
	base := job("base.json", []kern{{"sgemm", 0, 100}, {"relu", 110, 130}, {"sgemm", 140, 240}, {"relu", 250, 270}},
		[]float64{0, 135, 280})
	cand := job("cand.json", []kern{{"sgemm", 0, 200}, {"relu", 210, 230}, {"sgemm", 730, 930}, {"relu", 940, 960}},
		[]float64{0, 235, 960})
	return analyse(base), analyse(cand)
}

func TestKnownChanges(t *testing.T) {
	b, c := basePair()
	res := Compare(b, c, Options{FailPct: 5})
	if !res.Comparable {
		t.Errorf("not comparable: %v", res.Problems)
	}
	us := func(v float64) model.Duration { return model.Duration(v * 1000) }
	want := map[string][2]model.Duration{
		QSpan:      {us(270), us(960)},
		QBusy:      {us(240), us(440)},
		QIdle:      {us(30), us(520)},
		QKernelGap: {0, us(500)},
		QStep:      {us(140), us(480)}, // medians of (135, 145) and (235, 725)
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
	if r := Compare(b, c, Options{}); r.Regressed() {
		t.Error("regressed without a gate")
	}
	same := Compare(b, b, Options{FailPct: 1})
	if same.Regressed() || len(same.NewFindings)+len(same.Resolved) != 0 || same.Kernels[0].Delta() != 0 {
		t.Errorf("self-compare: %+v", same)
	}
}

func TestNotComparable(t *testing.T) {
	b, _ := basePair()
	other := fixture.New("other.json", model.FormatNsys)
	other.T.Devices[0].Name = "Other GPU"
	other.Device(1, "Other GPU")
	th := other.Thread(1, "main")
	other.Kernel(0, 1, "ncclKernel", 0, 50, th, 0)
	other.Kernel(1, 1, "flash_fwd", 0, 50, th, 0)
	other.Kernel(1, 1, "sgemm", 60, 70, th, 55)
	o := analyse(other.Build())
	res := Compare(b, o, Options{})
	if res.Comparable || len(res.Problems) != 2 {
		t.Fatalf("problems = %v", res.Problems)
	}
	if !strings.Contains(res.Problems[0], "base has 1 device(s), candidate 2") ||
		!strings.Contains(res.Problems[1], "kernel-name overlap 25.0% is below 50.0%") {
		t.Errorf("problems = %v", res.Problems)
	}
	var buf bytes.Buffer
	if err := Render(&buf, res, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "WARNING not comparable: ") {
		t.Errorf("text lacks the warning:\n%s", buf.String())
	}
}

func TestStepFromFinding(t *testing.T) {
	b, c := basePair()
	b.Report.Findings = append(b.Report.Findings, model.Finding{Rule: "step-latency", Metrics: []model.Metric{{Name: "step_p50_ns", Value: 1000, Unit: "ns"}}})
	c.Report.Findings = append(c.Report.Findings, model.Finding{Rule: "step-latency", Metrics: []model.Metric{{Name: "step_p50_ns", Value: 1500, Unit: "ns"}}})
	q, _ := Compare(b, c, Options{}).Quantity(QStep)
	if q.Base != 1000 || q.Cand != 1500 || q.Source != "step-latency p50" {
		t.Errorf("step = %+v", q)
	}
	b.Set, c.Set = nil, nil
	b.Report.Findings, c.Report.Findings = nil, nil
	if q, _ := Compare(b, c, Options{}).Quantity(QStep); q.Known {
		t.Errorf("step known without markers: %+v", q)
	}
}

func TestFindingKey(t *testing.T) {
	a := model.Finding{Rule: "kernel-gap", Title: "rank 0 device 0 idle 12.5% of the span in 3 gaps > 50.0µs"}
	b := model.Finding{Rule: "kernel-gap", Title: "rank 0 device 0 idle 40.1% of the span in 9 gaps > 50.0µs"}
	if findingKey(&a) != findingKey(&b) {
		t.Error("titles differing only in numbers do not match")
	}
	b.Severity = model.SevError
	added, resolved, changed := findingChanges([]model.Finding{a, {Rule: "memcpy", Title: "pageable copies"}}, []model.Finding{b, b})
	if len(added) != 1 || len(resolved) != 1 || resolved[0].Rule != "memcpy" {
		t.Errorf("added %v resolved %v", added, resolved)
	}
	if len(changed) != 1 || changed[0].From != model.SevInfo || changed[0].To != model.SevError {
		t.Errorf("changed %v", changed)
	}
}

// renderPair is basePair with findings fixed here, so that the golden
// files do not change with the detectors' wording.
func renderPair() (Side, Side) {
	b, c := basePair()
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

func TestRender(t *testing.T) {
	b, c := renderPair()
	res := Compare(b, c, Options{FailPct: 5})
	for _, f := range Formats {
		var buf bytes.Buffer
		if err := Render(&buf, res, f); err != nil {
			t.Fatal(err)
		}
		got := buf.Bytes()
		switch f {
		case "json":
			var v map[string]any
			if err := json.Unmarshal(got, &v); err != nil || v["schema"] != JSONSchema || v["regressed"] != true {
				t.Errorf("json: %v %v", err, v["schema"])
			}
		case "junit":
			var v struct {
				Failures int `xml:"failures,attr"`
			}
			if err := xml.Unmarshal(got, &v); err != nil || v.Failures != 3 {
				t.Errorf("junit: %v, %d failures", err, v.Failures)
			}
		}
		ext := map[string]string{"text": ".txt", "md": ".md", "json": ".json", "junit": ".xml"}[f]
		path := filepath.Join("testdata", "diff"+ext)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s (run with -update):\n%s", f, path, got)
		}
		var again bytes.Buffer
		_ = Render(&again, Compare(b, c, Options{FailPct: 5}), f)
		if !bytes.Equal(got, again.Bytes()) {
			t.Errorf("%s: output differs between runs", f)
		}
	}
	if err := Render(&bytes.Buffer{}, res, "html"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestDevicePairing(t *testing.T) {
	ds := func(keys ...[2]int) []model.DeviceSummary {
		var out []model.DeviceSummary
		for _, k := range keys {
			out = append(out, model.DeviceSummary{Rank: k[0], Device: model.DeviceID(k[1]), Busy: model.Duration(k[0]*10 + k[1])})
		}
		return out
	}
	// Same keys: by key.
	got := deviceDeltas(ds([2]int{1, 1}, [2]int{0, 0}), ds([2]int{0, 0}, [2]int{1, 1}))
	if len(got) != 2 || got[0].Paired || got[1].Cand.Busy != 11 {
		t.Errorf("same keys: %+v", got)
	}
	// Same count, other keys: paired in order.
	got = deviceDeltas(ds([2]int{0, 0}, [2]int{1, 1}), ds([2]int{2, 2}, [2]int{3, 3}))
	if len(got) != 2 || !got[0].Paired || got[0].Cand.Device != 2 || got[1].Cand.Rank != 3 {
		t.Errorf("paired: %+v", got)
	}
	// Different counts: merged by key.
	got = deviceDeltas(ds([2]int{0, 0}, [2]int{0, 5}), ds([2]int{0, 3}))
	var keys []string
	for _, d := range got {
		keys = append(keys, fmt.Sprintf("%d/%v/%v", d.Device, d.InBase, d.InCan))
	}
	if strings.Join(keys, " ") != "0/true/false 3/false/true 5/true/false" {
		t.Errorf("merged: %v", keys)
	}
}
