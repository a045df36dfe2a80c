package gpumetrics

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the gpu-metrics rule.
var Detector = &detectors.Detector{
	ID:       "gpu-metrics",
	Title:    "GPU hardware metrics against utilisation targets",
	Layer:    model.LayerHardware,
	Severity: model.SevWarning,
	Needs:    []model.Capability{model.CapGPUMetrics},
	Formats:  detectors.TimelineFormats,
	Params: []detectors.Param{
		{Name: "sm_target", Default: 80, Unit: "%", Doc: "SMs active (while the GPU works) below this is under-filled"},
		{Name: "sm_warn", Default: 50, Unit: "%", Doc: "SMs active (while the GPU works) below this makes the finding a warning"},
		{Name: "dram_bound", Default: 70, Unit: "%", Doc: "DRAM read + write bandwidth at or above this marks a memory-bound phase"},
		{Name: "tensor_bound", Default: 90, Unit: "%", Doc: "tensor active at or above this marks a GEMM-bound phase"},
		{Name: "link_high", Default: 70, Unit: "%", Doc: "PCIe or NVLink throughput at or above this is near saturation"},
		{Name: "idle_sm", Default: 5, Unit: "%", Doc: "samples with SMs active below this count as GPU idle (left to kernel-gap)"},
		{Name: "warmup_steps", Default: 1, Unit: "steps", Doc: "steps skipped as warm-up when the trace has more steps than this"},
		{Name: "warmup_pct", Default: 10, Unit: "%", Doc: "share of the sampled span skipped as warm-up when the trace has too few steps"},
	},
	Doc: `Reads Nsight Systems GPU-metrics samples (nsys profile --gpu-metrics-devices=all;
the GPU_METRICS table and the metric names of TARGET_INFO_GPU_METRICS, bare
names of nsys 2021-2022 and unit-suffixed names of 2022.4+) per device over the
steady state (after warm-up steps, or after warmup_pct of the sampled span):

- SMs active while the GPU works (samples with SMs active ≥ idle_sm) below
  sm_target: kernels leave SMs empty (small grids, small batch, tail
  effects, serialised small kernels); warning below sm_warn. Not reported
  on a memory-bound device (below): there DRAM is the limit. Idle samples
  are counted and left to kernel-gap, which sees the gaps themselves;
- DRAM read + write bandwidth ≥ dram_bound: a memory-bound phase at the
  bandwidth roof (info: the target for such phases is met; speed comes
  from moving fewer bytes);
- tensor active ≥ tensor_bound: a GEMM-bound phase with the tensor cores
  saturated (info; speed comes from fewer or cheaper FLOPs);
- PCIe RX/TX ≥ link_high: host↔device transfers saturate the link
  (warning); NVLink RX/TX ≥ link_high: peer traffic near the link's limit
  (info);
- an info summary per trace: per device SMs active, SM issue, tensor
  active, DRAM read/write, PCIe and NVLink throughput, and with step ranges
  the spread of SMs active across steps.

Values are the percentages nsys stores (0-100 of each unit's peak).

## How to fix
- Under-filled SMs: larger batches or micro-batches, fuse small kernels,
  CUDA graphs for many tiny launches, check grid sizes against the SM count.
- Memory-bound: fuse element-wise kernels, lower precision (BF16/FP8
  weights and KV cache), larger decode batches to reuse each weight read.
- GEMM-bound: FP8 GEMMs, fewer FLOPs (smaller model, pruning), more GPUs.
- PCIe saturated: keep data on the GPU, pinned memory and overlapped
  copies, fewer host round trips; NVLink saturated: reduce collective
  volume (gradient compression, better TP/PP split).
`,
	Run: run,
}

// devStats accumulates one device's steady samples.
type devStats struct {
	dev        model.DeviceID
	sum        [nKinds]float64 // over all steady rows
	busySum    [nKinds]float64 // over rows with SMs active ≥ idle_sm
	n          [nKinds]int
	busyN      [nKinds]int
	rows, idle int
	// smRows counts rows with SMs active: the idle share's base (a row
	// without it, when nsys stamps metrics apart, is neither).
	smRows int
	sm     []smPoint // for per-step spread
}

type smPoint struct {
	t  model.Time
	sm float64
}

func (d *devStats) mean(k kind) (float64, bool) {
	if d.n[k] == 0 {
		return 0, false
	}
	return d.sum[k] / float64(d.n[k]), true
}

func (d *devStats) busy(k kind) (float64, bool) {
	if d.busyN[k] == 0 {
		return 0, false
	}
	return d.busySum[k] / float64(d.busyN[k]), true
}

func run(p *detectors.Pass) error {
	looked := false
	for _, t := range p.Set.Traces {
		kinds := make([]kind, len(t.Counters))
		found := false
		for i, c := range t.Counters {
			kinds[i] = classify(t.Str(c.Name), t.Str(c.Unit))
			found = found || kinds[i] != kNone
		}
		if !found {
			continue
		}
		devs, steady, how := collect(p, t, kinds)
		if len(devs) == 0 {
			continue
		}
		looked = true
		name := filepath.Base(t.Path)
		for _, d := range devs {
			judge(p, t, d, steady, name)
		}
		summary(p, t, devs, steady, how, name)
	}
	if !looked {
		p.NotMeasurable("no SM / tensor / DRAM / PCIe / NVLink throughput metrics among the GPU metrics (nsys --gpu-metrics-devices)")
	}
	return nil
}

// collect sums the steady-state samples per device. Samples of one device
// taken at one timestamp form a row; a row is busy when its SMs active is
// at least idle_sm (rows without SMs active count as busy).
func collect(p *detectors.Pass, t *model.Trace, kinds []kind) ([]*devStats, model.Interval, string) {
	var span model.Interval
	first := true
	for _, s := range t.Samples {
		if kinds[s.Series] == kNone {
			continue
		}
		if first {
			span = model.Interval{Start: s.Time, End: s.Time}
			first = false
		}
		span.Start, span.End = min(span.Start, s.Time), max(span.End, s.Time)
	}
	steady, how := detectors.Steady(t, span, int(p.Param("warmup_steps")), p.Param("warmup_pct"))
	idleSM := p.Param("idle_sm")
	byDev := map[model.DeviceID]*devStats{}
	type row struct {
		t    model.Time
		v    [nKinds]float64
		has  [nKinds]bool
		open bool
	}
	cur := map[model.DeviceID]*row{}
	flush := func(d *devStats, r *row) {
		if !r.open {
			return
		}
		d.rows++
		isBusy := !r.has[kSMActive] || r.v[kSMActive] >= idleSM
		if !isBusy {
			d.idle++
		}
		if r.has[kSMActive] {
			d.smRows++
			d.sm = append(d.sm, smPoint{r.t, r.v[kSMActive]})
		}
		for k := kSMActive; k < nKinds; k++ {
			if !r.has[k] {
				continue
			}
			d.sum[k] += r.v[k]
			d.n[k]++
			if isBusy {
				d.busySum[k] += r.v[k]
				d.busyN[k]++
			}
		}
		*r = row{}
	}
	for _, s := range t.Samples {
		k := kinds[s.Series]
		if k == kNone || s.Time < steady.Start || s.Time > steady.End {
			continue
		}
		dev := t.Counters[s.Series].Device
		d, ok := byDev[dev]
		if !ok {
			d = &devStats{dev: dev}
			byDev[dev] = d
			cur[dev] = &row{}
		}
		r := cur[dev]
		if r.open && r.t != s.Time {
			flush(d, r)
		}
		r.open, r.t = true, s.Time
		// Several series of one kind (NVLink request and response user
		// data) add up: each is a share of the same link direction.
		r.v[k] = min(r.v[k]+s.Value, 100)
		r.has[k] = true
	}
	out := make([]*devStats, 0, len(byDev))
	for dev, d := range byDev {
		flush(d, cur[dev])
		if d.rows > 0 {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dev < out[j].dev })
	return out, steady, how
}

func evidence(t *model.Trace, d *devStats, steady model.Interval, note string) []model.Evidence {
	return []model.Evidence{{Rank: t.Rank, Device: d.dev, Stream: model.NoStream, Thread: -1, Start: steady.Start, End: steady.End, Note: note}}
}

func devName(t *model.Trace, dev model.DeviceID) string {
	if d, ok := t.Device(dev); ok && d.Name != "" {
		return fmt.Sprintf("GPU %d (%s)", dev, d.Name)
	}
	if dev == model.NoDevice {
		return "GPU ?"
	}
	return fmt.Sprintf("GPU %d", dev)
}

func pct(v float64) string { return detectors.FormatFloat(v) + "%" }

// judge reports one device's findings against the targets.
func judge(p *detectors.Pass, t *model.Trace, d *devStats, steady model.Interval, name string) {
	dn := devName(t, d.dev)
	idleShare := detectors.Pct(float64(d.idle), float64(d.smRows))
	r, okR := d.busy(kDRAMRead)
	w, okW := d.busy(kDRAMWrite)
	dram := min(r+w, 100)
	memBound := (okR || okW) && dram >= p.Param("dram_bound")
	// Memory-bound kernels need not fill every SM: the DRAM finding below
	// names the limit, so under-filled SMs are not reported then.
	if sm, ok := d.busy(kSMActive); ok && sm < p.Param("sm_target") && !memBound {
		sev := model.SevInfo
		if sm < p.Param("sm_warn") {
			sev = model.SevWarning
		}
		issue, _ := d.busy(kSMIssue)
		p.Report(model.Finding{
			Severity: sev,
			Title:    "SMs under-filled while the GPU works",
			Message: fmt.Sprintf("%s %s: SMs active %s while kernels run (target > %s; SM issue %s); %s of the steady samples the GPU was idle (see kernel-gap).",
				name, dn, pct(sm), pct(p.Param("sm_target")), pct(issue), pct(idleShare)),
			Recommendation: "Give kernels more parallel work: larger batches or micro-batches, fused small kernels, CUDA graphs for many tiny launches; check grid sizes against the SM count.",
			Metrics: []model.Metric{{Name: "sm_active_busy_pct", Value: detectors.Round2(sm), Unit: "%"},
				{Name: "idle_samples_pct", Value: detectors.Round2(idleShare), Unit: "%"}},
			Evidence: evidence(t, d, steady, dn+" steady state"),
		})
	}
	if memBound {
		p.Report(model.Finding{
			Severity: model.SevInfo,
			Title:    "Memory-bound phase: DRAM bandwidth near its peak",
			Message: fmt.Sprintf("%s %s: DRAM read %s + write %s = %s of peak bandwidth while kernels run (≥ %s): the kernels wait on memory; the target for memory-bound work is met.",
				name, dn, pct(r), pct(w), pct(dram), pct(p.Param("dram_bound"))),
			Recommendation: "Move fewer bytes: fuse element-wise kernels, BF16/FP8 weights and KV cache, larger decode batches so each weight read serves more tokens.",
			Metrics:        []model.Metric{{Name: "dram_pct", Value: detectors.Round2(dram), Unit: "%"}},
			Evidence:       evidence(t, d, steady, dn+" DRAM"),
		})
	}
	if ten, ok := d.busy(kTensor); ok && ten >= p.Param("tensor_bound") {
		p.Report(model.Finding{
			Severity:       model.SevInfo,
			Title:          "GEMM-bound phase: tensor cores saturated",
			Message:        fmt.Sprintf("%s %s: tensor cores active %s while kernels run (≥ %s): matrix math is the limit.", name, dn, pct(ten), pct(p.Param("tensor_bound"))),
			Recommendation: "Cheaper FLOPs (FP8 GEMMs) or fewer of them (smaller model, pruning), or more GPUs.",
			Metrics:        []model.Metric{{Name: "tensor_active_pct", Value: detectors.Round2(ten), Unit: "%"}},
			Evidence:       evidence(t, d, steady, dn+" tensor"),
		})
	}
	links(p, t, d, steady, name, dn)
}

func links(p *detectors.Pass, t *model.Trace, d *devStats, steady model.Interval, name, dn string) {
	high := p.Param("link_high")
	for _, l := range []struct {
		k          kind
		sev        model.Severity
		title, fix string
	}{
		{kPCIeRX, model.SevWarning, "PCIe link saturated", "Keep data on the GPU; use pinned memory and overlapped async copies; cut host round trips."},
		{kPCIeTX, model.SevWarning, "PCIe link saturated", "Keep data on the GPU; use pinned memory and overlapped async copies; cut host round trips."},
		{kNVLinkRX, model.SevInfo, "NVLink near saturation", "Reduce peer traffic: a better TP/PP split, fewer or compressed collectives."},
		{kNVLinkTX, model.SevInfo, "NVLink near saturation", "Reduce peer traffic: a better TP/PP split, fewer or compressed collectives."},
	} {
		v, ok := d.mean(l.k)
		if !ok || v < high {
			continue
		}
		p.Report(model.Finding{
			Severity:       l.sev,
			Title:          l.title,
			Message:        fmt.Sprintf("%s %s: %s throughput %s of the link's peak over the steady state (≥ %s).", name, dn, kindNames[l.k], pct(v), pct(high)),
			Recommendation: l.fix,
			Metrics:        []model.Metric{{Name: strings.ReplaceAll(strings.ToLower(kindNames[l.k]), " ", "_") + "_pct", Value: detectors.Round2(v), Unit: "%"}},
			Evidence:       evidence(t, d, steady, dn+" "+kindNames[l.k]),
		})
	}
}

// summary reports the per-device means of one trace (info).
func summary(p *detectors.Pass, t *model.Trace, devs []*devStats, steady model.Interval, how, name string) {
	var lines []string
	var ev []model.Evidence
	for _, d := range devs {
		var parts []string
		for k := kSMActive; k < nKinds; k++ {
			if v, ok := d.mean(k); ok {
				parts = append(parts, kindNames[k]+" "+pct(v))
			}
		}
		s := fmt.Sprintf("%s: %s (%d samples, %s idle)", devName(t, d.dev), strings.Join(parts, ", "), d.rows,
			pct(detectors.Pct(float64(d.idle), float64(d.smRows))))
		if st := perStep(t, d); st != "" {
			s += "; " + st
		}
		lines = append(lines, s)
		ev = append(ev, evidence(t, d, steady, devName(t, d.dev))...)
	}
	p.Report(model.Finding{
		Severity: model.SevInfo,
		Title:    "GPU metrics summary",
		Message:  fmt.Sprintf("%s, steady state (%s), means: %s.", name, how, strings.Join(lines, "; ")),
		Evidence: ev,
	})
}

// perStep gives the spread of SMs active across the trace's top-level
// steps (empty without steps). Hook: when the step model marks prefill and
// decode phases, this is where the targets get judged per phase.
func perStep(t *model.Trace, d *devStats) string {
	var means []float64
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind != model.RangeStep || r.Depth != 0 || r.Thread == model.NoThread {
			continue
		}
		lo := sort.Search(len(d.sm), func(j int) bool { return d.sm[j].t >= r.Start })
		sum, n := 0.0, 0
		for j := lo; j < len(d.sm) && d.sm[j].t <= r.End; j++ {
			sum += d.sm[j].sm
			n++
		}
		if n > 0 {
			means = append(means, sum/float64(n))
		}
	}
	if len(means) < 2 {
		return ""
	}
	sort.Float64s(means)
	return fmt.Sprintf("SMs active per step %s to %s over %d steps", pct(means[0]), pct(means[len(means)-1]), len(means))
}
