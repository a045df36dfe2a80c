package roofline

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the roofline rule.
var Detector = &detectors.Detector{
	ID:       "roofline",
	Title:    "GEMM throughput against the device roofline",
	Layer:    model.LayerHardware,
	Severity: model.SevWarning,
	Formats:  []model.Format{model.FormatKineto},
	Needs:    []model.Capability{model.CapKernels},
	Params: []detectors.Param{
		{Name: "target_pct", Default: 70, Unit: "%", Doc: "share of the attainable throughput a well-tuned GEMM reaches; time below it counts as lost"},
		{Name: "min_kernel_us", Default: 4, Unit: "µs", Doc: "shortest time a GEMM call can take (launch and tile set-up); tiny GEMMs are not counted as losing time below it"},
		{Name: "lost_pct", Default: 5, Unit: "%", Doc: "lost GEMM time as a share of kernel time at or above which it is reported"},
		{Name: "warn_pct", Default: 40, Unit: "%", Doc: "lost GEMM time as a share of kernel time at or above which the finding is a warning (below it: info; small models rarely fill the GPU and that is not a fault)"},
	},
	Doc: `Computes the FLOPs of GEMM operators (aten::mm, addmm, bmm, baddbmm,
linear, matmul, _scaled_mm) from the input shapes Kineto records with
record_shapes=True (2·M·N·K per product), and divides by the GPU time of
the kernels and copies each operator launched (by External id, as
TraceLens counts it). The attainable throughput of a shape is the lower of
the device's dense peak for its dtype (BF16/FP16, FP8, TF32 or FP32; table
in peaks.go, from the vendors' datasheets) and its arithmetic intensity
(FLOPs over the bytes of A, B and C) times the memory bandwidth. Time
spent beyond what target_pct of the attainable throughput would need (but
at least min_kernel_us per call: tiny GEMMs are bound by launch and set-up,
not by the roofline) is lost; the shapes that lose the most are listed with the best throughput
another shape of the same dtype reached on the device.

The rule is silent (not measurable) when no shapes are recorded or the
device is not in the table.

## How to fix
- Small or skinny GEMMs (decode batch of a few tokens) are memory-bound:
  batch more requests per step, or fuse (e.g. QKV, gate/up projections).
- Dimensions that are not multiples of 64/128 waste tiles: pad the
  hidden and vocabulary sizes.
- A shape far below its neighbours: try torch.compile (max-autotune), a
  newer cuBLAS/hipBLASLt, or TunableOp (PYTORCH_TUNABLEOP_ENABLED=1) on ROCm.
- FP32 GEMMs: see the tensor-core rule.
`,
	Run: run,
}

// group aggregates the instances of one operator shape.
type group struct {
	key          string
	dtype        string
	count        int
	flops, bytes float64
	time         model.Duration
	attain       float64 // attainable TFLOP/s
	lost         model.Duration
}

func (g *group) tflops() float64 { return g.flops / float64(g.time) / 1e3 }

func run(p *detectors.Pass) error {
	looked := false
	for _, t := range p.Set.Traces {
		if len(t.OpShapes) == 0 {
			continue
		}
		looked = true
		analyse(p, t)
	}
	if !looked {
		p.NotMeasurable("no recorded operator shapes (profile with torch.profiler record_shapes=True to measure GEMM throughput)")
	}
	return nil
}

type opTime struct {
	time   model.Duration
	gemm   bool
	tc     bool
	device model.DeviceID
}

func analyse(p *detectors.Pass, t *model.Trace) {
	byExt := map[int64]*opTime{}
	var all model.Duration
	ops := model.KernelOps(t)
	tensorCore := map[model.StringID]bool{}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		all += k.End.Sub(k.Start)
		if k.ExternalID == 0 {
			continue
		}
		o := byExt[k.ExternalID]
		if o == nil {
			o = &opTime{device: k.Device}
			byExt[k.ExternalID] = o
		}
		o.time += k.End.Sub(k.Start)
		if ops[i] == model.OpGEMM {
			tc, ok := tensorCore[k.Name]
			if !ok {
				tc = model.GEMMOf(t.Str(k.Name)).TensorCore
				tensorCore[k.Name] = tc
			}
			o.gemm = true
			o.tc = o.tc || tc
		}
	}
	for i := range t.MemOps {
		m := &t.MemOps[i]
		if o := byExt[m.ExternalID]; o != nil && m.ExternalID != 0 {
			o.time += m.End.Sub(m.Start)
		}
	}
	groups := map[string]*group{}
	var peak Peak
	havePeak := false
	for i := range t.OpShapes {
		s := &t.OpShapes[i]
		o := byExt[s.ExternalID]
		if o == nil || !o.gemm || o.time <= 0 {
			continue
		}
		dev, _ := t.Device(o.device)
		pk, ok := PeakFor(dev.Name)
		if !ok {
			continue
		}
		peak, havePeak = pk, true
		name := t.Str(s.Name)
		dims, dtype, ok := model.GEMMOfOp(name, s)
		tf, elem := pk.For(dtype, o.tc)
		if !ok || tf == 0 {
			continue
		}
		key := fmt.Sprintf("%s %v %s", name, s.Dims, dtype)
		g := groups[key]
		if g == nil {
			g = &group{key: key, dtype: dtype}
			groups[key] = g
		}
		g.count++
		g.flops += dims.Flops()
		g.bytes += float64(elem) * dims.Elems()
		g.time += o.time
		if g.bytes > 0 {
			g.attain = min(tf, g.flops/g.bytes*pk.TBps)
		} else {
			g.attain = tf
		}
	}
	if len(groups) == 0 {
		if !havePeak {
			p.NotMeasurable("%s: the device is not in the roofline table, or its GEMMs have no recorded shapes", filepath.Base(t.Path))
		}
		return
	}
	report(p, t, groups, peak, all)
}

func report(p *detectors.Pass, t *model.Trace, groups map[string]*group, pk Peak, all model.Duration) {
	target := p.Param("target_pct") / 100
	var list []*group
	var lost, gemmTime model.Duration
	var flops float64
	best := map[string]float64{}
	for _, g := range groups {
		// ns at target_pct of attainable, but never below the per-call floor.
		need := max(model.Duration(g.flops/(target*g.attain*1e3)), model.Duration(float64(g.count)*p.Param("min_kernel_us")*1e3))
		g.lost = max(0, g.time-need)
		lost += g.lost
		gemmTime += g.time
		flops += g.flops
		list = append(list, g)
		best[g.dtype] = max(best[g.dtype], g.tflops())
	}
	sort.Slice(list, func(i, j int) bool {
		return list[i].lost > list[j].lost || list[i].lost == list[j].lost && list[i].key < list[j].key
	})
	share := 100 * float64(lost) / float64(max(all, 1))
	metrics := []model.Metric{{Name: "gemm_tflops", Value: flops / float64(gemmTime) / 1e3, Unit: "TFLOP/s"},
		{Name: "lost_pct", Value: share, Unit: "%", Num: float64(lost), Den: float64(all)}, {Name: "shapes", Value: float64(len(list)), Unit: "count"}}
	sev := model.SevInfo
	title := "GEMM throughput"
	if share >= p.Param("lost_pct") {
		title = "GEMMs below the device roofline"
		if share >= p.Param("warn_pct") {
			sev = model.SevWarning
		}
	}
	var worst []string
	for _, g := range list[:min(3, len(list))] {
		worst = append(worst, fmt.Sprintf("%s ×%d: %.0f TFLOP/s of %.0f attainable (best %s shape %.0f), %s lost",
			g.key, g.count, g.tflops(), g.attain, shortType(g.dtype), best[g.dtype], g.lost))
	}
	p.Report(model.Finding{Severity: sev, Title: title, Confidence: model.Estimated,
		Message: fmt.Sprintf("%s on %s: %d GEMM shape(s), %s of GPU time at %.0f TFLOP/s overall; %s (%.1f%% of kernel time) lost below %.0f%% of the attainable throughput. Worst: %s.",
			filepath.Base(t.Path), pk.Name, len(list), gemmTime, flops/float64(gemmTime)/1e3, lost, share, 100*target, strings.Join(worst, "; ")),
		Recommendation: "Batch or fuse small GEMMs, pad dimensions to multiples of 64/128, and try torch.compile max-autotune or a newer BLAS for shapes far below their neighbours.",
		Metrics:        metrics})
}

func shortType(dtype string) string { return strings.TrimPrefix(dtype, "c10::") }
