package cudagraph

import (
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func decode(graph bool) []fixture.StepSpec {
	var ks []string
	for i := 0; i < 40; i++ {
		ks = append(ks, "void at::native::vectorized_elementwise_kernel<4>")
	}
	return fixture.Repeat(10, fixture.StepSpec{Name: "step[DECODE bs=8]", Kernels: ks, KernelUS: 2, Graph: graph, GapAfterUS: 20})
}

func analyse(t *testing.T, tr *model.Trace) detectors.Result {
	t.Helper()
	return detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
}

func TestPlantedEagerDecode(t *testing.T) {
	res := analyse(t, fixture.Inference("eager.json", decode(false)))
	if len(res.Findings) != 1 || res.Findings[0].Title != "Decode launched eagerly, without CUDA graphs" || res.Findings[0].Severity != model.SevWarning {
		t.Fatalf("%+v", res.Findings)
	}
	if m, _ := res.Findings[0].Metric("eager_kernel_pct"); m.Value != 100 {
		t.Errorf("eager %v", m.Value)
	}
}

func TestCleanGraphDecode(t *testing.T) {
	res := analyse(t, fixture.Inference("graph.json", decode(true)))
	if len(res.Findings) != 1 || res.Findings[0].Title != "CUDA graph replays" || res.Findings[0].Severity != model.SevInfo {
		t.Fatalf("%+v", res.Findings)
	}
	if m, _ := res.Findings[0].Metric("graph_kernels"); m.Value != 400 {
		t.Errorf("graph kernels %v", m.Value)
	}
}

// Kineto gives replayed kernels no graph id: they are found by the
// correlation id of their cudaGraphLaunch.
func TestGraphKernelsByCorrelation(t *testing.T) {
	tr := fixture.Inference("graph.json", decode(true))
	for i := range tr.Kernels {
		tr.Kernels[i].Config = model.NoConfig
	}
	res := analyse(t, tr)
	if len(res.Findings) != 1 || res.Findings[0].Title != "CUDA graph replays" {
		t.Fatalf("%+v", res.Findings)
	}
	if m, _ := res.Findings[0].Metric("graph_kernels"); m.Value != 400 {
		t.Errorf("graph kernels %v", m.Value)
	}
}
