package tensorcore

import (
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func trace(names ...string) *model.Trace {
	b := fixture.New("gemm.json", model.FormatKineto)
	b.T.Devices[0].ComputeMajor, b.T.Devices[0].ComputeMinor = 9, 0
	th := b.Thread(1, "main")
	at := 0.0
	for i := 0; i < 10; i++ {
		for _, n := range names {
			b.Kernel(0, 7, n, at, at+100, th, at)
			at += 110
		}
	}
	return b.Build()
}

func analyse(t *testing.T, tr *model.Trace) detectors.Result {
	t.Helper()
	return detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
}

func TestPlantedSIMTAndOldArch(t *testing.T) {
	res := analyse(t, trace("volta_sgemm_128x64_nt", "sm75_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize64x64x64", "void at::native::elementwise_kernel<128, 4>"))
	if len(res.Findings) != 2 {
		t.Fatalf("%+v", res.Findings)
	}
	for _, f := range res.Findings {
		switch f.Title {
		case "FP32 GEMMs on CUDA cores (no tensor cores)":
			if m, _ := f.Metric("simt_pct_of_kernels"); f.Severity != model.SevWarning || m.Value < 33 || m.Value > 34 {
				t.Errorf("simt: %v %+v", f.Severity, m)
			}
		case "GEMMs built for an older GPU architecture":
			if m, _ := f.Metric("old_arch_pct_of_gemm"); m.Value != 100 { // volta_sgemm (sm70) and sm75_xmma both
				t.Errorf("old arch: %+v", m)
			}
		default:
			t.Errorf("unexpected %s", f.Title)
		}
	}
}

func TestCleanTensorCoreGEMMs(t *testing.T) {
	// sm80 kernels on sm90 are common cuBLAS picks, not a fault.
	res := analyse(t, trace("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>",
		"gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false>"))
	if len(res.Findings) != 0 {
		t.Fatalf("%+v", res.Findings)
	}
}
