package memorypressure

import (
	"fmt"
	"path/filepath"
	"sort"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// devMem is what one device's allocator events say.
type devMem struct {
	dev          model.DeviceID
	peakRes      int64
	gapAtPeak    int64 // reserved − allocated when reserved peaked
	peakResTime  model.Time
	hasReserved  bool // Kineto: the caching allocator's reserved total
	grow, shrink int  // reserved (Kineto) or in-use (nsys) increases / decreases in the steady state
	first, last  model.Time
}

// traceMemory reads allocator events of timeline traces: Kineto [memory]
// events (PyTorch caching allocator: allocated and reserved totals) and nsys
// CUDA_GPU_MEMORY_USAGE_EVENTS (cudaMalloc / cudaFree: memory in use). It
// returns whether the trace had any.
func traceMemory(p *detectors.Pass, t *model.Trace) bool {
	devs := collectMem(p, t)
	if len(devs) == 0 {
		return false
	}
	name := filepath.Base(t.Path)
	for _, d := range devs {
		dev, _ := t.Device(d.dev)
		judgeMem(p, t, d, dev.MemoryBytes, name)
	}
	return true
}

func collectMem(p *detectors.Pass, t *model.Trace) []*devMem {
	byDev := map[model.DeviceID]*devMem{}
	var span model.Interval
	for _, e := range t.MemEvents {
		if e.Device == model.NoDevice || e.Device < 0 {
			continue
		}
		if len(byDev) == 0 {
			span = model.Interval{Start: e.Time, End: e.Time}
		}
		span.Start, span.End = min(span.Start, e.Time), max(span.End, e.Time)
		d, ok := byDev[e.Device]
		if !ok {
			d = &devMem{dev: e.Device, first: e.Time}
			byDev[e.Device] = d
		}
		d.last = e.Time
		res := e.TotalReserved
		if res >= 0 {
			d.hasReserved = true
		} else {
			res = e.TotalAllocated // nsys: memory obtained from the driver
		}
		if res > d.peakRes {
			d.peakRes, d.peakResTime = res, e.Time
			if d.hasReserved && e.TotalAllocated >= 0 {
				d.gapAtPeak = res - e.TotalAllocated
			}
		}
	}
	if len(byDev) == 0 {
		return nil
	}
	steady, _ := detectors.Steady(t, span, int(p.Param("warmup_steps")), p.Param("warmup_pct"))
	prev := map[model.DeviceID]int64{}
	for _, e := range t.MemEvents {
		d := byDev[e.Device]
		if d == nil {
			continue
		}
		level := e.TotalReserved
		if !d.hasReserved {
			level = e.TotalAllocated
		}
		last, seen := prev[e.Device]
		prev[e.Device] = level
		if !seen || e.Time < steady.Start || e.Time > steady.End {
			continue
		}
		switch {
		case level > last:
			d.grow++
		case level < last:
			d.shrink++
		}
	}
	out := make([]*devMem, 0, len(byDev))
	for _, d := range byDev {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dev < out[j].dev })
	return out
}

func memEvidence(t *model.Trace, d *devMem, start, end model.Time, note string) model.Evidence {
	return model.Evidence{Rank: t.Rank, Device: d.dev, Stream: model.NoStream, Thread: -1, Start: start, End: end, Note: note}
}

func gib(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30)) }

// judgeMem reports a device near its capacity, fragmentation under
// pressure and allocator churn in the steady state.
func judgeMem(p *detectors.Pass, t *model.Trace, d *devMem, capa int64, name string) {
	ev := []model.Evidence{memEvidence(t, d, d.peakResTime, d.peakResTime, fmt.Sprintf("%s GPU %d reserved peak", name, d.dev))}
	if capa > 0 {
		share := float64(d.peakRes) / float64(capa)
		held := fmt.Sprintf("%s GPU %d: %s of %s (%.1f%%) held at the peak", name, d.dev, gib(d.peakRes), gib(capa), 100*share)
		peak := []model.Metric{{Name: "peak_share", Value: detectors.Round2(100 * share), Unit: "%"}}
		switch {
		case share >= p.Param("near_full"):
			p.Report(model.Finding{
				Severity:       model.SevWarning,
				Title:          "GPU memory nearly full",
				Message:        held + ": a larger batch, a longer sequence or a burst of allocations will fail with out-of-memory.",
				Recommendation: "Leave headroom: smaller batch or sequence, activation checkpointing, lower gpu_memory_utilization for inference engines, FP8/BF16 where FP32 is kept.",
				Metrics:        peak,
				Evidence:       ev,
			})
		case share >= p.Param("pressure"):
			p.Report(model.Finding{
				Severity: model.SevInfo,
				Title:    "GPU memory mostly held",
				Message:  held + "; expected for inference engines, which preallocate the KV cache up to gpu_memory_utilization.",
				Metrics:  peak,
				Evidence: ev,
			})
		}
		frag := float64(d.gapAtPeak)
		if d.hasReserved && share >= p.Param("pressure") && frag >= p.Param("frag_gib")*(1<<30) && frag >= p.Param("frag_fraction")*float64(capa) {
			p.Report(model.Finding{
				Severity: model.SevWarning,
				Title:    "Allocator fragmentation under memory pressure",
				Message: fmt.Sprintf("%s GPU %d: at the reserved peak the caching allocator held %s that no tensor used (reserved %s, allocated %s) on a device %.1f%% full.",
					name, d.dev, gib(d.gapAtPeak), gib(d.peakRes), gib(d.peakRes-d.gapAtPeak), 100*share),
				Recommendation: "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; avoid many differently-sized allocations in the loop.",
				Metrics:        []model.Metric{{Name: "reserved_unallocated", Value: detectors.Round2(frag / (1 << 30)), Unit: "GiB"}},
				Evidence:       ev,
			})
		}
	}
	if churn := min(d.grow, d.shrink); churn >= int(p.Param("churn_min")) {
		what := "reserved memory"
		if !d.hasReserved {
			what = "CUDA memory in use (cudaMalloc/cudaFree)"
		}
		p.Report(model.Finding{
			Severity: model.SevWarning,
			Title:    "Allocator churn in the steady state",
			Message: fmt.Sprintf("%s GPU %d: %s grew %d times and shrank %d times in the steady state: memory goes back to the driver and is requested again; each cudaMalloc / cudaFree is slow and cudaFree synchronises the device.",
				name, d.dev, what, d.grow, d.shrink),
			Recommendation: "Do not call torch.cuda.empty_cache() in the loop; keep allocation sizes stable (pad shapes, bucket sequence lengths); expandable_segments:True; with raw CUDA, use a memory pool (cudaMallocAsync).",
			Metrics:        []model.Metric{{Name: "grow", Value: float64(d.grow), Unit: "count"}, {Name: "shrink", Value: float64(d.shrink), Unit: "count"}},
			Evidence:       []model.Evidence{memEvidence(t, d, d.first, d.last, fmt.Sprintf("%s GPU %d allocator events", name, d.dev))},
		})
	}
}
