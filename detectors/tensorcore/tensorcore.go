package tensorcore

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the tensor-core rule.
var Detector = &detectors.Detector{
	ID:       "tensor-core",
	Title:    "GEMMs off the tensor cores",
	Layer:    model.LayerKernel,
	Severity: model.SevWarning,
	Formats:  detectors.TimelineFormats,
	Needs:    []model.Capability{model.CapKernels},
	Params: []detectors.Param{
		{Name: "simt_pct", Default: 5, Unit: "%", Doc: "share of kernel time on SIMT FP32 GEMMs (sgemm) at or above which it is reported (warning at three times it)"},
		{Name: "old_arch_pct", Default: 10, Unit: "%", Doc: "share of GEMM time on kernels built two or more architecture generations before the device at or above which it is reported"},
	},
	Doc: `Reads GEMM and convolution kernel names. A SIMT FP32 GEMM (cuBLAS
volta_/turing_/ampere_sgemm, gemmSN) runs on the CUDA cores: on an A100 or
H100 it reaches a small fraction of what the tensor cores give in TF32,
BF16 or FP8. The rule reports the share of kernel time such kernels take
(warning at three times simt_pct), the share of GEMM time that ran on
tensor cores (names with mma/wgmma/xmma/tensorop/s16816 or AMD MFMA tiles),
and GEMMs built for an architecture two or more generations older than the
device (an sm75_ kernel on sm90: the library fell back to a kernel without
the newer instructions). GEMV kernels (batch-1 decode) are memory-bound
and are not counted as SIMT GEMMs.

## How to fix
- Run the model in bf16/fp16 (torch.autocast, model.to(torch.bfloat16),
  the engine's --dtype); FP32 weights in inference are almost never needed.
- Where FP32 must stay, allow TF32: torch.set_float32_matmul_precision("high")
  or torch.backends.cuda.matmul.allow_tf32 = True.
- Old-architecture kernels: upgrade the framework / cuBLAS / the wheel built
  for your GPU (CUDA 12 wheels for sm90), and check TORCH_CUDA_ARCH_LIST of
  custom extensions.
`,
	Run: run,
}

type acc struct {
	gemm, simt, tc, old, all model.Duration
	simtNames                map[string]model.Duration
	oldNames                 map[string]int
}

func run(p *detectors.Pass) error {
	for _, t := range p.Set.Traces {
		if len(t.Kernels) == 0 {
			continue
		}
		a := acc{simtNames: map[string]model.Duration{}, oldNames: map[string]int{}}
		devArch := map[model.DeviceID]int{}
		for _, d := range t.Devices {
			if d.ComputeMajor > 0 && d.Vendor != "AMD" {
				devArch[d.ID] = int(d.ComputeMajor*10 + d.ComputeMinor)
			}
		}
		ops := model.KernelOps(t)
		gemms := map[model.StringID]model.GEMMInfo{}
		for i := range t.Kernels {
			k := &t.Kernels[i]
			d := k.End.Sub(k.Start)
			a.all += d
			if ops[i] != model.OpGEMM && ops[i] != model.OpConv {
				continue
			}
			g, ok := gemms[k.Name]
			if !ok {
				g = model.GEMMOf(t.Str(k.Name))
				gemms[k.Name] = g
			}
			a.gemm += d
			switch {
			case g.TensorCore:
				a.tc += d
			case g.SIMT:
				a.simt += d
				a.simtNames[t.Str(k.Name)] += d
			}
			if arch := devArch[k.Device]; arch > 0 && g.Arch > 0 && g.Arch/10 < arch/10-1 {
				a.old += d
				a.oldNames[fmt.Sprintf("sm%d kernel on sm%d", g.Arch, arch)]++
			}
		}
		report(p, t, &a)
	}
	return nil
}

func report(p *detectors.Pass, t *model.Trace, a *acc) {
	if a.gemm == 0 || a.all == 0 {
		return
	}
	name := filepath.Base(t.Path)
	tcPct := 100 * float64(a.tc) / float64(a.gemm)
	simtPct := 100 * float64(a.simt) / float64(a.all)
	metrics := []model.Metric{{Name: "tensor_core_pct_of_gemm", Value: tcPct, Unit: "%", Num: float64(a.tc), Den: float64(a.gemm)},
		{Name: "simt_pct_of_kernels", Value: simtPct, Unit: "%", Num: float64(a.simt), Den: float64(a.all)}}
	if simtPct >= p.Param("simt_pct") {
		sev := model.SevInfo
		if simtPct >= 3*p.Param("simt_pct") {
			sev = model.SevWarning
		}
		p.Report(model.Finding{Severity: sev, Title: "FP32 GEMMs on CUDA cores (no tensor cores)",
			Message: fmt.Sprintf("%s: %.1f%% of kernel time (%s) is SIMT FP32 GEMM; %.1f%% of GEMM time ran on tensor cores. Top: %s.",
				name, simtPct, a.simt, tcPct, top(a.simtNames, 3)),
			Recommendation: "Run in bf16/fp16 (autocast or the engine's --dtype), or allow TF32 with torch.set_float32_matmul_precision(\"high\").",
			Metrics:        metrics})
	}
	if oldPct := 100 * float64(a.old) / float64(a.gemm); oldPct >= p.Param("old_arch_pct") {
		var kinds []string
		for k, n := range a.oldNames {
			kinds = append(kinds, fmt.Sprintf("%s ×%d", k, n))
		}
		sort.Strings(kinds)
		p.Report(model.Finding{Severity: model.SevInfo, Title: "GEMMs built for an older GPU architecture",
			Message: fmt.Sprintf("%s: %.1f%% of GEMM time (%s) ran kernels built two or more generations before the device (%s); they lack the newer matrix instructions.",
				name, oldPct, a.old, strings.Join(kinds, ", ")),
			Recommendation: "Upgrade PyTorch/cuBLAS to a build for this GPU and rebuild custom extensions with its arch in TORCH_CUDA_ARCH_LIST.",
			Metrics:        append(metrics, model.Metric{Name: "old_arch_pct_of_gemm", Value: oldPct, Unit: "%", Num: float64(a.old), Den: float64(a.gemm)})})
	}
}

// top lists the n names with the most time.
func top(m map[string]model.Duration, n int) string {
	type kv struct {
		k string
		v model.Duration
	}
	var s []kv
	for k, v := range m {
		s = append(s, kv{k, v})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].v > s[j].v || s[i].v == s[j].v && s[i].k < s[j].k })
	var out []string
	for _, e := range s[:min(n, len(s))] {
		out = append(out, fmt.Sprintf("%s (%s)", e.k, e.v))
	}
	return strings.Join(out, ", ")
}
