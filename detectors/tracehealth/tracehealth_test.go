package tracehealth

import (
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func run1(t *testing.T, tr *model.Trace) detectors.Result {
	t.Helper()
	res := detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return res
}

func TestFindsMissingEvidence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() *model.Trace
		want  string
	}{
		{"gpu-only", func() *model.Trace {
			b := fixture.New("gpu.json", model.FormatKineto)
			b.Kernel(0, 7, "k", 0, 10, model.NoThread, 0)
			return b.Build()
		}, "GPU-only trace"},
		{"cpu-only", func() *model.Trace {
			b := fixture.New("cpu.json", model.FormatKineto)
			th := b.Thread(1, "main")
			b.Range(th, model.RangeStep, "ProfilerStep#1", 0, 10)
			b.Range(th, model.RangeCPUOp, "aten::mm", 1, 5)
			return b.Build()
		}, "CPU-only capture"},
		{"records-lost", func() *model.Trace {
			b := fixture.New("lost.sqlite", model.FormatNsys)
			th := b.Thread(1, "main")
			for i := 0; i < 5; i++ {
				b.API(th, "cudaLaunchKernel_v7000", model.APILaunch, float64(i*10), float64(i*10+5), int64(i+1))
			}
			return b.Build()
		}, "device activity records lost (5 launches, 0 kernels)"},
		{"init-only", func() *model.Trace {
			b := fixture.New("init.sqlite", model.FormatNsys)
			th := b.Thread(1, "main")
			b.API(th, "cudaFree", model.APIAlloc, 0, 5000, 0)
			return b.Build()
		}, "ended during CUDA initialisation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run1(t, tc.build())
			if len(res.Findings) != 1 || !strings.Contains(res.Findings[0].Message, tc.want) {
				t.Fatalf("findings: %+v", res.Findings)
			}
		})
	}
}

func TestQuietOnCompleteCapture(t *testing.T) {
	b := fixture.New("full.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Range(th, model.RangeStep, "ProfilerStep#1", 0, 100)
	b.Range(th, model.RangeCPUOp, "aten::mm", 1, 50)
	b.Kernel(0, 7, "gemm", 10, 60, th, 5)
	res := run1(t, b.Build())
	if len(res.Findings) != 0 {
		t.Fatalf("complete capture got findings: %+v", res.Findings)
	}
}

func TestWarningsRaiseSeverity(t *testing.T) {
	b := fixture.New("warn.json", model.FormatKineto)
	th := b.Thread(1, "main")
	b.Range(th, model.RangeStep, "ProfilerStep#1", 0, 100)
	b.Range(th, model.RangeCPUOp, "aten::mm", 1, 50)
	b.Kernel(0, 7, "gemm", 10, 60, th, 5)
	for i := 0; i < 100; i++ {
		b.T.Warn("event 1", "bad")
	}
	res := run1(t, b.Build())
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevWarning {
		t.Fatalf("findings: %+v", res.Findings)
	}
}
