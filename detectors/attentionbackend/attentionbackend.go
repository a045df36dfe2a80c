package attentionbackend

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the attention-backend rule.
var Detector = &detectors.Detector{
	ID:       "attention-backend",
	Title:    "Attention implementation",
	Layer:    model.LayerKernel,
	Severity: model.SevWarning,
	Formats:  detectors.TimelineFormats,
	Needs:    []model.Capability{model.CapKernels},
	Params: []detectors.Param{
		{Name: "eager_pct", Default: 10, Unit: "%", Doc: "share of kernel time in eager attention (softmax + batched matmuls) at or above which it is reported (warning at 2.5 times it)"},
	},
	Doc: `Names the attention implementation from the kernels that ran: fused
attention kernels (FlashAttention, FlashInfer, paged attention, PyTorch
SDPA memory-efficient, cuDNN SDPA, Triton, TensorRT-LLM FMHA, AITER) are
grouped by backend with their share of kernel time (an info finding).

Eager attention is Q·Kᵀ and P·V as batched matmuls with a separate
softmax kernel between them: it writes the full attention matrix to
memory. With Kineto's External id the rule sums the kernels launched by
aten::bmm / aten::baddbmm / aten::matmul and the softmax kernels; without
it (Nsight Systems) it counts softmax kernels only and says so. Eager
attention at or above eager_pct of kernel time, and more than the fused
attention time, is reported (warning at 2.5 × eager_pct).

## How to fix
- Use torch.nn.functional.scaled_dot_product_attention (HF Transformers:
  attn_implementation="sdpa" or "flash_attention_2") instead of a manual
  softmax(Q @ K.T) @ V.
- In engines pick a fused backend: vLLM VLLM_ATTENTION_BACKEND
  (FLASH_ATTN, FLASHINFER, TRITON_ATTN on ROCm), SGLang --attention-backend
  (flashinfer, fa3, triton); check the startup log for a fallback to a
  slower backend (old GPU, unsupported head size or dtype).
`,
	Run: run,
}

var eagerOps = map[string]bool{"aten::bmm": true, "aten::baddbmm": true, "aten::matmul": true, "aten::einsum": true}

func run(p *detectors.Pass) error {
	for _, t := range p.Set.Traces {
		if len(t.Kernels) == 0 {
			continue
		}
		parents, hasOps := model.KernelParents(t)
		var all, softmax, bmm, fused model.Duration
		backends := map[string]model.Duration{}
		ops := model.KernelOps(t)
		for i := range t.Kernels {
			k := &t.Kernels[i]
			d := k.End.Sub(k.Start)
			all += d
			switch ops[i] {
			case model.OpAttention:
				fused += d
				backends[model.AttentionBackend(t.Str(k.Name))] += d
			case model.OpSoftmax:
				softmax += d
			case model.OpGEMM:
				if eagerOps[t.Str(parents[i])] {
					bmm += d
				}
			}
		}
		report(p, t, all, softmax, bmm, fused, backends, hasOps)
	}
	return nil
}

func report(p *detectors.Pass, t *model.Trace, all, softmax, bmm, fused model.Duration, backends map[string]model.Duration, parents bool) {
	if all == 0 {
		return
	}
	name := filepath.Base(t.Path)
	share := func(d model.Duration) float64 { return 100 * float64(d) / float64(all) }
	if fused > 0 {
		var bs []string
		for b, d := range backends {
			bs = append(bs, fmt.Sprintf("%s %.1f%%", b, share(d)))
		}
		sort.Strings(bs)
		p.Report(model.Finding{Severity: model.SevInfo, Title: "Attention backend",
			Message: fmt.Sprintf("%s: fused attention kernels take %.1f%% of kernel time (%s): %s.", name, share(fused), fused, strings.Join(bs, ", ")),
			Metrics: []model.Metric{{Name: "fused_attention_pct", Value: share(fused), Unit: "%", Num: float64(fused), Den: float64(all)}}})
	}
	eager := softmax + bmm
	if softmax == 0 || eager <= fused || share(eager) < p.Param("eager_pct") {
		return
	}
	sev, conf := model.SevInfo, model.Measured
	if share(eager) >= 2.5*p.Param("eager_pct") {
		sev = model.SevWarning
	}
	how := fmt.Sprintf("softmax %s and batched matmuls launched by aten::bmm/baddbmm/matmul %s", softmax, bmm)
	if !parents {
		how, conf = fmt.Sprintf("softmax kernels %s; the capture does not link kernels to their CPU ops, so the batched matmuls are not counted", softmax), model.Inferred
	}
	p.Report(model.Finding{Severity: sev, Title: "Eager attention (softmax + batched matmul)", Confidence: conf,
		Message:        fmt.Sprintf("%s: %.1f%% of kernel time (%s) is eager attention: %s; fused attention kernels take %s.", name, share(eager), eager, how, fused),
		Recommendation: "Use scaled_dot_product_attention / attn_implementation=\"sdpa\" or \"flash_attention_2\", or a fused engine backend (vLLM VLLM_ATTENTION_BACKEND, SGLang --attention-backend).",
		Metrics: []model.Metric{{Name: "eager_attention_pct", Value: share(eager), Unit: "%", Num: float64(eager), Den: float64(all)},
			{Name: "softmax_pct", Value: share(softmax), Unit: "%"}}})
}
