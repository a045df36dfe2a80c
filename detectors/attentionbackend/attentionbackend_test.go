package attentionbackend

import (
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// layer adds n attention layers; eager ones launch bmm + softmax + bmm
// under aten::bmm / aten::_softmax CPU ops, fused ones one flash kernel.
func layer(eager bool) *model.Trace {
	b := fixture.New("attn.json", model.FormatKineto)
	th := b.Thread(1, "main")
	at, ext := 0.0, int64(0)
	add := func(op, kernel string, us float64) {
		ext++
		b.Range(th, model.RangeCPUOp, op, at, at+5)
		b.T.Ranges[len(b.T.Ranges)-1].ExternalID = ext
		b.Kernel(0, 7, kernel, at+6, at+6+us, th, at+1)
		b.T.Kernels[len(b.T.Kernels)-1].ExternalID = ext
		at += us + 10
	}
	for i := 0; i < 8; i++ {
		add("aten::mm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 50)
		if eager {
			add("aten::bmm", "sm75_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize64x64x64_batched", 80)
			add("aten::_softmax", "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>", 60)
			add("aten::bmm", "sm75_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize64x64x64_batched", 80)
		} else {
			add("aten::_scaled_dot_product_flash_attention", "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64>>", 40)
		}
	}
	return b.Build()
}

func analyse(t *testing.T, tr *model.Trace) detectors.Result {
	t.Helper()
	return detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
}

func TestPlantedEagerAttention(t *testing.T) {
	res := analyse(t, layer(true))
	if len(res.Findings) != 1 || res.Findings[0].Title != "Eager attention (softmax + batched matmul)" || res.Findings[0].Severity != model.SevWarning {
		t.Fatalf("%+v", res.Findings)
	}
	if m, _ := res.Findings[0].Metric("eager_attention_pct"); m.Value < 81 || m.Value > 82 { // 220 of 270 µs
		t.Errorf("eager share %v", m.Value)
	}
}

func TestCleanFlashAttention(t *testing.T) {
	res := analyse(t, layer(false))
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevInfo || res.Findings[0].Title != "Attention backend" {
		t.Fatalf("%+v", res.Findings)
	}
	if got := res.Findings[0].Message; got != "attn.json: fused attention kernels take 44.4% of kernel time (320.0µs): flash-attention 44.4%." {
		t.Errorf("message: %s", got)
	}
}
