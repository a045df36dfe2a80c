package kernelgap

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func runOn(t *testing.T, traces ...*model.Trace) detectors.Result {
	t.Helper()
	res := detectors.Run(fixture.Set(traces...), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return res
}

// checkGaps validates tr and checks that Analyze finds exactly the gaps of
// want, with their causes, on its one device.
func checkGaps(t *testing.T, tr *model.Trace, want []fixture.ExpectedGap) {
	t.Helper()
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
	got := Analyze(tr, 50*model.Microsecond, model.Second)
	if len(got) != 1 {
		t.Fatalf("devices: got %d, want 1", len(got))
	}
	gaps := got[0].Gaps
	if len(gaps) != len(want) {
		t.Fatalf("gaps: got %d, want %d: %+v", len(gaps), len(want), gaps)
	}
	for i, w := range want {
		g := gaps[i]
		if g.Start != fixture.US(w.StartUS) || g.End != fixture.US(w.EndUS) || g.Cause.String() != w.Cause {
			t.Errorf("gap %d: got [%d,%d) %s (%s), want [%d,%d) %s", i, g.Start, g.End, g.Cause, g.Detail,
				fixture.US(w.StartUS), fixture.US(w.EndUS), w.Cause)
		}
	}
}

func TestPlantedCauses(t *testing.T) {
	tr, want := fixture.GapCauses()
	checkGaps(t, tr, want)
	res := runOn(t, tr)
	if len(res.Findings) != 1 {
		t.Fatalf("findings: %d", len(res.Findings))
	}
	f := res.Findings[0]
	checks := map[string]float64{
		"gap_count":                6,
		"gap_total_ns":             1180e3,
		"sync-blocked_ns":          200e3,
		"memcpy-blocked_ns":        280e3,
		"comm-wait_ns":             300e3,
		"gil_ns":                   200e3,
		"launch-bound_ns":          100e3,
		"dependency-wait_ns":       100e3,
		"gap_max_ns":               300e3,
		"span_ns":                  2050e3,
		"launch-bound_pct_of_span": 4.88,
	}
	for name, want := range checks {
		m, ok := f.Metric(name)
		if !ok || m.Value != want {
			t.Errorf("metric %s = %v (present %v), want %v", name, m.Value, ok, want)
		}
	}
	if f.Severity != model.SevError { // 1180/2050 = 57.6% ≥ 40%
		t.Errorf("severity %s, want error", f.Severity)
	}
	if len(f.Evidence) != 6 || f.Evidence[0].Start != fixture.US(900) {
		t.Errorf("evidence should list the largest gap first: %+v", f.Evidence)
	}
	if !strings.Contains(f.Title, "mostly comm-wait") {
		t.Errorf("title %q", f.Title)
	}
}

func TestCleanQuiet(t *testing.T) {
	res := runOn(t, fixture.BackToBack(50))
	if len(res.Findings) != 0 {
		t.Fatalf("clean trace got findings: %+v", res.Findings)
	}
	if len(res.NotMeasurable) != 0 {
		t.Fatalf("clean trace got not-measurable: %+v", res.NotMeasurable)
	}
}

func TestGPUOnlyNotMeasurable(t *testing.T) {
	b := fixture.New("gpu-only.json", model.FormatKineto)
	b.Kernel(0, 7, "a", 0, 100, model.NoThread, 0)
	b.Kernel(0, 7, "b", 300, 400, model.NoThread, 0)
	res := runOn(t, b.Build())
	if len(res.Findings) != 1 {
		t.Fatalf("findings: %+v", res.Findings)
	}
	if m, _ := res.Findings[0].Metric("not-measurable_ns"); m.Value != 200e3 {
		t.Errorf("not-measurable_ns = %v", m.Value)
	}
	if len(res.NotMeasurable) != 1 || !strings.Contains(res.NotMeasurable[0].Reason, "GPU-only") {
		t.Errorf("not measurable: %+v", res.NotMeasurable)
	}
}

func TestCPUOnlyNotMeasurable(t *testing.T) {
	b := fixture.New("cpu-only.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Range(th, model.RangeCPUOp, "aten::add", 0, 10)
	res := runOn(t, b.Build())
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 1 {
		t.Fatalf("findings %+v not measurable %+v", res.Findings, res.NotMeasurable)
	}
}

func TestThresholdParam(t *testing.T) {
	tr, _ := fixture.GapCauses()
	cfg := detectors.Config{Params: map[string]map[string]float64{"kernel-gap": {"min_gap_us": 250}}}
	res := detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, cfg)
	m, _ := res.Findings[0].Metric("gap_count")
	if m.Value != 2 { // 280 and 300 µs
		t.Errorf("gap_count with 250 µs threshold = %v, want 2", m.Value)
	}
}

func BenchmarkAnalyze(b *testing.B) {
	fb := fixture.New("bench.json", model.FormatKineto)
	th := fb.Thread(1, "main")
	for i := 0; i < 200000; i++ {
		s := float64(i) * 200
		fb.Kernel(0, 7, "k", s, s+100, th, s+50)
	}
	tr := fb.Build()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Analyze(tr, 50*model.Microsecond, model.Second)
	}
	b.ReportMetric(float64(len(tr.Kernels))*float64(b.N)/b.Elapsed().Seconds(), "kernels/s")
}

// TestStepsDecideSeverity: a long start-up gap before the first profiler
// step must not make the steady state look idle.
func TestStepsDecideSeverity(t *testing.T) {
	b := fixture.New("steps.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Kernel(0, 7, "init", 0, 10, th, 0)
	// 10 ms of start-up, then a step of back-to-back kernels with one 60 µs gap.
	b.Range(th, model.RangeStep, "ProfilerStep#1", 10000, 11000)
	for i := 0; i < 9; i++ {
		s := 10000 + float64(i)*100
		if i >= 5 {
			s += 60
		}
		b.Kernel(0, 7, "k", s, s+95, th, s-50)
	}
	res := runOn(t, b.Build())
	if len(res.Findings) != 1 {
		t.Fatalf("findings: %+v", res.Findings)
	}
	f := res.Findings[0]
	if whole, _ := f.Metric("gap_pct_of_span"); whole.Value < 80 {
		t.Fatalf("whole-span idle %v%%, want the start-up gap to dominate", whole.Value)
	}
	if in, _ := f.Metric("in_steps_gap_ns"); in.Value != 65e3 {
		t.Errorf("in-steps gap %v ns, want 65 µs", in.Value)
	}
	if f.Severity != model.SevInfo {
		t.Errorf("severity %s, want info (6.5%% of the step is idle)", f.Severity)
	}
}

// TestPlantedCausesFull: every cause beyond the basic ones, each with a
// competing signal (fixture.GapCausesFull says which).
func TestPlantedCausesFull(t *testing.T) {
	tr, want := fixture.GapCausesFull()
	checkGaps(t, tr, want)
	res := runOn(t, tr)
	if len(res.Findings) != 1 {
		t.Fatalf("findings: %d", len(res.Findings))
	}
	f := res.Findings[0]
	// The 2 s outside-workload gap is reported but left out of the share
	// that sets the severity: 50.2 ms idle in the 56.2 ms left (89%).
	if m, _ := f.Metric("outside-workload_ns"); m.Value != 2e9 {
		t.Errorf("outside-workload_ns = %v", m.Value)
	}
	if m, _ := f.Metric("severity_window_ns"); m.Value != float64(2056200-2000000)*1e3 {
		t.Errorf("severity_window_ns = %v", m.Value)
	}
	if strings.Contains(f.Title, "outside-workload") || !strings.Contains(f.Message, "left out of that share") {
		t.Errorf("title %q / message %q", f.Title, f.Message)
	}
	byCause := map[string]model.Evidence{}
	for _, e := range f.Evidence {
		byCause[e.Cause] = e
	}
	for cause, ctx := range map[string]string{
		"data-loading": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
		"host-compute": "aten::index",
		"jit-compile":  "nvrtcCompileProgram",
		"lazy-init":    "warmup > cudaFree",
	} {
		if e, ok := byCause[cause]; !ok || e.Context != ctx {
			t.Errorf("%s evidence context %q, want %q", cause, e.Context, ctx)
		}
	}
	if e := byCause["dependency-wait"]; !strings.Contains(e.Note, "cudaStreamWaitEvent") {
		t.Errorf("dependency-wait note %q should name the stream wait", e.Note)
	}
}

// TestQuietLauncherBusyProcess: the launching thread makes no CUDA call for
// 2 s, but another thread of its process keeps calling (2 % of the time):
// the process was working, so the gap is host-compute, not
// outside-workload (the per-process call union says so).
func TestQuietLauncherBusyProcess(t *testing.T) {
	b := fixture.New("busy.sqlite", model.FormatNsys)
	main := b.Thread(1, "python")
	worker := b.Thread(2, "worker")
	b.Kernel(0, 7, "K0", 0, 100, main, 0)
	for s := 200.0; s < 2000000; s += 1000 {
		b.API(worker, "cudaEventQuery_v3020", model.APIOther, s, s+20, 0)
	}
	b.Kernel(0, 7, "K1", 2000100, 2000200, main, 2000050)
	checkGaps(t, b.Build(), []fixture.ExpectedGap{{StartUS: 100, EndUS: 2000100, Cause: "host-compute"}})
}
