package roofline

import (
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// gemms builds n aten::mm calls of M=N=K=size on an H100, each running one
// cuBLAS kernel for us µs.
func gemms(n int, size int64, us float64, shapes bool) *model.Trace {
	b := fixture.New("mm.json", model.FormatKineto)
	b.T.Devices[0].Name = "NVIDIA H100 80GB HBM3"
	th := b.Thread(1, "main")
	at := 0.0
	for i := 0; i < n; i++ {
		ext := int64(i + 1)
		b.Range(th, model.RangeCPUOp, "aten::mm", at, at+5)
		b.T.Ranges[len(b.T.Ranges)-1].ExternalID = ext
		b.Kernel(0, 7, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", at+6, at+6+us, th, at+1)
		b.T.Kernels[len(b.T.Kernels)-1].ExternalID = ext
		if shapes {
			b.T.OpShapes = append(b.T.OpShapes, model.OpShape{ExternalID: ext, Name: b.T.Intern("aten::mm"),
				Dims: [][]int64{{size, size}, {size, size}}, Types: []string{"c10::BFloat16", "c10::BFloat16"}})
		}
		at += us + 10
	}
	return b.Build()
}

func check(t *testing.T, tr *model.Trace) detectors.Result {
	t.Helper()
	return detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
}

func TestPlantedSlowGEMM(t *testing.T) {
	// 8192³ bf16: 1.0995 TFLOP per call; at 5.5 ms that is 200 TFLOP/s, 20% of the 989 peak.
	res := check(t, gemms(4, 8192, 5500, true))
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevWarning || res.Findings[0].Title != "GEMMs below the device roofline" {
		t.Fatalf("%+v", res.Findings)
	}
	if m, _ := res.Findings[0].Metric("gemm_tflops"); m.Value < 199 || m.Value > 201 {
		t.Errorf("TFLOP/s %v", m.Value)
	}
	if m, _ := res.Findings[0].Metric("lost_pct"); m.Value < 70 || m.Value > 72 { // 5.5 ms vs 1.588 ms at 70% of peak
		t.Errorf("lost %v", m.Value)
	}
}

func TestCleanFastGEMM(t *testing.T) {
	// 1.3 ms per call: 846 TFLOP/s, above 70% of peak.
	res := check(t, gemms(4, 8192, 1300, true))
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevInfo || res.Findings[0].Title != "GEMM throughput" {
		t.Fatalf("%+v", res.Findings)
	}
}

func TestNoShapesNotMeasurable(t *testing.T) {
	res := check(t, gemms(4, 8192, 5500, false))
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 1 {
		t.Fatalf("%+v %+v", res.Findings, res.NotMeasurable)
	}
}

func TestPeakFor(t *testing.T) {
	for name, want := range map[string]string{"NVIDIA H100 80GB HBM3": "H100 SXM", "NVIDIA H100 PCIe": "H100 PCIe", "NVIDIA H200": "H200",
		"NVIDIA A100-SXM4-80GB": "A100", "NVIDIA B200": "B200", "AMD Instinct MI300X": "MI300X", "AMD Instinct MI250X": "MI250X", "AMD Instinct MI210": "MI210"} {
		if p, ok := PeakFor(name); !ok || p.Name != want {
			t.Errorf("%s: %+v", name, p)
		}
	}
	if _, ok := PeakFor("Tesla T4"); ok {
		t.Error("T4 is not in the table")
	}
}
