package launchoverhead

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// launchBound: n kernels of 2 µs, each launched 10 µs after the previous
// launch (a 5 µs cudaLaunchKernel, the kernel starting 1 µs after it
// returns): the GPU is idle 8 µs of every 10 µs, and each gap begins before
// the next launch call returns (an empty queue).
func launchBound(path string, f model.Format, n int) *fixture.B {
	b := fixture.New(path, f)
	th := b.Thread(1, "main")
	for i := 0; i < n; i++ {
		l := float64(i) * 10
		b.Kernel(0, 7, "tiny_kernel", l+6, l+8, th, l)
	}
	return b
}

func run1(t *testing.T, tr *model.Trace) detectors.Result {
	t.Helper()
	res := detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return res
}

func metric(f model.Finding, name string) float64 {
	for _, m := range f.Metrics {
		if m.Name == name {
			return m.Value
		}
	}
	return -1
}

func TestFindsPlantedLaunchBound(t *testing.T) {
	b := launchBound("app.sqlite", model.FormatNsys, 1000)
	b.T.Processes[0].Name = "./app"
	res := run1(t, b.Build())
	if len(res.Findings) != 1 {
		t.Fatalf("want 1 finding, got %+v", res.Findings)
	}
	f := res.Findings[0]
	// Span [6, 9998) µs: 999 gaps of 8 µs = 7.992 ms of 9.992 ms.
	if f.Severity != model.SevError {
		t.Errorf("severity %v, want error", f.Severity)
	}
	for name, want := range map[string]float64{
		"starved_gap_count": 999, "starved_idle_ns": 7992e3, "short_gap_count": 999, "kernels": 1000,
		"kernel_p50_ns": 2000, "launch_call_p50_ns": 5000, "starved_idle_pct": 79.98, "queue_max": 1,
	} {
		if got := metric(f, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if len(f.Evidence) != 3 {
		t.Errorf("evidence: %d entries, want 3", len(f.Evidence))
	}
	// A native CUDA program gets CUDA advice, not PyTorch's.
	if strings.Contains(f.Recommendation, "torch") || !strings.Contains(f.Recommendation, "cudaStreamBeginCapture") {
		t.Errorf("native CUDA advice expected: %s", f.Recommendation)
	}
	if !strings.Contains(f.Message, "kernels shorter than their launch") || !strings.Contains(f.Message, "native CUDA") {
		t.Errorf("message: %s", f.Message)
	}
}

func TestFindsPlantedPyTorchAdvice(t *testing.T) {
	res := run1(t, launchBound("step.json", model.FormatKineto, 500).Build())
	if len(res.Findings) != 1 {
		t.Fatalf("want 1 finding, got %+v", res.Findings)
	}
	if r := res.Findings[0].Recommendation; !strings.Contains(r, `mode="reduce-overhead"`) {
		t.Errorf("PyTorch advice expected: %s", r)
	}
}

// TestQuietWhenSaturated: the host runs far ahead (every kernel is queued
// long before it starts); the short gaps between kernels are the GPU's own
// kernel-to-kernel latency, not starvation.
func TestQuietWhenSaturated(t *testing.T) {
	b := fixture.New("busy.sqlite", model.FormatNsys)
	th := b.Thread(1, "main")
	for i := 0; i < 1000; i++ {
		s := 100 + float64(i)*20.5
		b.Kernel(0, 7, "gemm", s, s+20, th, float64(i)*6)
	}
	res := run1(t, b.Build())
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 0 {
		t.Fatalf("want quiet, got %+v / %+v", res.Findings, res.NotMeasurable)
	}
	d := Analyze(b.T, 50*model.Microsecond)[0]
	if d.ShortCount != 999 || d.StarvedCount != 0 || d.Feed.QueueMax < 100 {
		t.Errorf("short %d starved %d queue max %d", d.ShortCount, d.StarvedCount, d.Feed.QueueMax)
	}
}

// TestQuietOnDependencyWaits: short gaps with the next kernel already
// submitted (waiting on another stream) are not launch overhead.
func TestQuietOnDependencyWaits(t *testing.T) {
	b := fixture.New("dep.sqlite", model.FormatNsys)
	th := b.Thread(1, "main")
	for i := 0; i < 500; i++ {
		s := 1000 + float64(i)*30
		b.Kernel(0, 7, "a", s, s+10, th, s-500)
		b.Kernel(0, 8, "b", s+20, s+28, th, s-490)
	}
	if res := run1(t, b.Build()); len(res.Findings) != 0 {
		t.Fatalf("want quiet, got %+v", res.Findings)
	}
}

func TestQuietBelowMinGaps(t *testing.T) {
	if res := run1(t, launchBound("few.sqlite", model.FormatNsys, 50).Build()); len(res.Findings) != 0 {
		t.Fatalf("want quiet with 49 gaps, got %+v", res.Findings)
	}
}

func TestGPUOnlyNotMeasurable(t *testing.T) {
	b := fixture.New("gpu.json", model.FormatKineto)
	for i := 0; i < 500; i++ {
		l := float64(i) * 10
		b.Kernel(0, 7, "tiny", l+6, l+8, model.NoThread, 0)
	}
	res := run1(t, b.Build())
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 1 || !strings.Contains(res.NotMeasurable[0].Reason, "no launch calls") {
		t.Fatalf("want not measurable, got %+v / %+v", res.Findings, res.NotMeasurable)
	}
}

// TestStepsDecide: only the profiler steps count; a launch storm before the
// first step (warm-up, outside every step) does not.
func TestStepsDecide(t *testing.T) {
	b := launchBound("warm.json", model.FormatKineto, 1000)
	th := b.Thread(1, "main")
	// One step after the storm, with a single long kernel filling it.
	b.Step(th, 1, 10100, 20100)
	b.Kernel(0, 7, "big", 10100, 20100, th, 10050)
	if res := run1(t, b.Build()); len(res.Findings) != 0 {
		t.Fatalf("want quiet (the storm is outside the steps), got %+v", res.Findings)
	}
}

func BenchmarkAnalyze(b *testing.B) {
	fb := fixture.New("bench.json", model.FormatKineto)
	th := fb.Thread(1, "main")
	for i := 0; i < 200000; i++ {
		s := float64(i) * 20
		fb.Kernel(0, 7, "k", s+8, s+10, th, s)
	}
	tr := fb.Build()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Analyze(tr, 50*model.Microsecond)
	}
	b.ReportMetric(float64(len(tr.Kernels))*float64(b.N)/b.Elapsed().Seconds(), "kernels/s")
}
