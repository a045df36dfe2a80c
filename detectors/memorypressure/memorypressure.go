package memorypressure

import (
	"fmt"
	"path/filepath"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the memory-pressure rule.
var Detector = &detectors.Detector{
	ID:       "memory-pressure",
	Title:    "KV cache saturation, start-up capacity and out-of-memory errors",
	Layer:    model.LayerMemory,
	Severity: model.SevWarning,
	Formats:  append([]model.Format{model.FormatJobLog}, detectors.TimelineFormats...),
	Params: []detectors.Param{
		{Name: "kv_high", Default: 0.9, Unit: "ratio", Doc: "KV cache usage at or above which the cache counts as full"},
		{Name: "sustained_samples", Default: 3, Unit: "count", Doc: "consecutive stats samples at kv_high or above that make saturation sustained"},
		{Name: "min_concurrency", Default: 4, Unit: "x", Doc: "start-up 'Maximum concurrency' below this many full-length requests is flagged"},
		{Name: "frag_gib", Default: 1, Unit: "GiB", Doc: "reserved-but-unallocated memory at an OOM above this is fragmentation"},
		{Name: "frag_fraction", Default: 0.1, Unit: "ratio", Doc: "… or above this fraction of the device's capacity (traces: both)"},
		{Name: "near_full", Default: 0.95, Unit: "ratio", Doc: "traces: peak reserved (or CUDA memory in use) at or above this share of the device warns"},
		{Name: "pressure", Default: 0.8, Unit: "ratio", Doc: "traces: peak share at or above this is noted, and makes cached-but-unallocated memory fragmentation"},
		{Name: "churn_min", Default: 3, Unit: "count", Doc: "traces: reserved memory growing and shrinking at least this many times each in the steady state is churn"},
		{Name: "warmup_steps", Default: 1, Unit: "steps", Doc: "traces: steps skipped as warm-up when the trace has more steps than this"},
		{Name: "warmup_pct", Default: 10, Unit: "%", Doc: "traces: share of the allocator events' span skipped as warm-up when the trace has too few steps"},
	},
	Doc: `Reads job and inference-engine logs for GPU memory limits:

- KV cache saturation: KV usage ≥ kv_high in at least sustained_samples
  consecutive stats samples (vLLM "GPU KV cache usage", SGLang "token usage",
  TensorRT-LLM used/max blocks). With preemptions (vLLM V0 "preempted by
  PreemptionMode.RECOMPUTE/SWAP", SGLang retractions) it is KV-bound: the
  message gives their count, rate and the generation throughput before and
  after the first one. 90 % is the threshold because vLLM and SGLang admit
  new requests only while blocks remain for their next tokens: above ~90 %
  a burst of long generations preempts (recompute wastes the finished
  prefill, swap costs PCIe time). Without preemption the warning says they
  are imminent;
- preemptions alone (any count) are reported too;
- start-up capacity: "Maximum concurrency for N tokens per request: X x"
  below min_concurrency (fewer than a handful of full-length requests fit:
  decode batches stay small and throughput low), or below the configured
  max_num_seqs / max_running_requests when the log prints it (info);
- CUDA out-of-memory errors (error) with the allocator's numbers; when
  "reserved by PyTorch but unallocated" is above frag_gib or frag_fraction
  of the device, the failure is fragmentation, not a lack of memory.

From traces (Kineto [memory] events: the PyTorch caching allocator's
allocated and reserved totals; nsys CUDA memory usage events: memory
obtained with cudaMalloc, no reserved/allocated split), per device:

- peak reserved at or above near_full of the device's memory (warning);
  at or above pressure an info note (inference engines preallocate the KV
  cache up to gpu_memory_utilization: high use is by design there);
- fragmentation: reserved − allocated at the reserved peak above frag_gib
  and frag_fraction of the device while the device is under pressure
  (Kineto only); cached memory on a device with room to spare is not a
  problem and only shows in the summary;
- allocator churn: reserved memory (nsys: memory in use) both growing and
  shrinking at least churn_min times in the steady state (empty_cache in
  the loop, varying shapes); growth alone is the cache warming up.

The peaks themselves are in the report's device-memory table.

## How to fix
- KV-bound: raise gpu_memory_utilization; FP8 KV cache (kv_cache_dtype=fp8);
  lower max_model_len or max_num_seqs; enable prefix caching; more TP or PP
  (KV per GPU shrinks) or more replicas; SGLang: mem_fraction_static.
- Low start-up capacity: the same levers; the model weights leave too
  little for KV at this max_model_len.
- Churn: no torch.cuda.empty_cache() in the loop, stable shapes (padding,
  bucketing), expandable_segments:True, cudaMallocAsync pools.
- OOM with large reserved-unallocated memory:
  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (fragmentation); else
  lower the batch or sequence length, use activation checkpointing, or give
  the engine a smaller gpu_memory_utilization when another process shares
  the GPU.
`,
	Run: run,
}

func run(p *detectors.Pass) error {
	looked, logs := false, false
	for _, t := range p.Set.Traces {
		j := t.JobLog
		if j == nil {
			looked = traceMemory(p, t) || looked
			continue
		}
		logs = true
		name := filepath.Base(t.Path)
		pre := j.EventsOf("preemption")
		if len(j.Stats) > 0 || len(j.Events) > 0 || len(j.Capacity) > 0 {
			looked = true
		}
		saturated := false
		for _, s := range j.Series() {
			saturated = kvSaturation(p, s, pre, name) || saturated
		}
		if !saturated && len(pre) > 0 {
			n := preempted(pre)
			p.Report(model.Finding{
				Severity:       model.SevWarning,
				Title:          "Requests preempted for lack of KV cache",
				Message:        fmt.Sprintf("%s: %d request(s) preempted (%s), first at line %d.", name, n, pre[0].Mode, pre[0].Line),
				Recommendation: "Give the KV cache more room (gpu_memory_utilization, kv_cache_dtype=fp8, smaller max_model_len / max_num_seqs, more TP/PP).",
				Metrics:        []model.Metric{{Name: "preemptions", Value: float64(n), Unit: "count"}},
				Evidence:       []model.Evidence{model.LogEvidence(pre[0].Rank, pre[0].Time, fmt.Sprintf("%s line %d", name, pre[0].Line))},
			})
		}
		capacity(p, j, name)
		ooms(p, j, name)
	}
	switch {
	case looked:
	case logs:
		p.NotMeasurable("no engine stats, capacity, preemption or OOM lines in the input")
	default:
		p.NotMeasurable("no allocator events in the trace (torch.profiler profile_memory=True, nsys --cuda-memory-usage=true)")
	}
	return nil
}

func preempted(evs []model.EngineEvent) int {
	n := 0
	for _, e := range evs {
		n += int(max(e.Count, 1))
	}
	return n
}

// kvSaturation reports sustained KV usage ≥ kv_high; it returns whether it did.
func kvSaturation(p *detectors.Pass, s model.EngineSeries, pre []model.EngineEvent, name string) bool {
	high, need := p.Param("kv_high"), int(p.Param("sustained_samples"))
	best, bestStart, run, start := 0, 0, 0, 0
	maxKV := 0.0
	for i, x := range s.Stats {
		maxKV = max(maxKV, x.KVUsage)
		if x.KVUsage >= high {
			if run == 0 {
				start = i
			}
			run++
			if run > best {
				best, bestStart = run, start
			}
		} else {
			run = 0
		}
	}
	if best < need {
		return false
	}
	a, b := s.Stats[bestStart], s.Stats[bestStart+best-1]
	where := fmt.Sprintf("%s %s lines %d-%d", name, s.Name(), a.Line, b.Line)
	msg := fmt.Sprintf("%s: KV cache usage ≥ %.0f%% in %d consecutive samples (max %.1f%%)", where, 100*high, best, 100*maxKV)
	metrics := []model.Metric{{Name: "kv_usage_max", Value: 100 * maxKV, Unit: "%"}, {Name: "saturated_samples", Value: float64(best), Unit: "count"}}
	sev := model.SevWarning
	if n := preempted(pre); n > 0 {
		msg += fmt.Sprintf(", with %d preempted request(s) (%s): KV-bound", n, pre[0].Mode)
		metrics = append(metrics, model.Metric{Name: "preemptions", Value: float64(n), Unit: "count"})
		first, last := pre[0], pre[len(pre)-1]
		if first.HasTime && last.HasTime && last.Time > first.Time {
			rate := float64(n) / (float64(last.Time-first.Time) / 60e9)
			msg += fmt.Sprintf(", %.1f per minute", rate)
			metrics = append(metrics, model.Metric{Name: "preemptions_per_min", Value: rate, Unit: "1/min"})
		}
		var before, after []float64
		for _, x := range s.Stats {
			if x.GenTPS < 0 {
				continue
			}
			if x.Line < first.Line {
				before = append(before, x.GenTPS)
			} else {
				after = append(after, x.GenTPS)
			}
		}
		if len(before) > 0 && len(after) > 0 {
			mb, ma := mean(before), mean(after)
			msg += fmt.Sprintf("; generation %.1f tokens/s before the first preemption, %.1f after", mb, ma)
			metrics = append(metrics, model.Metric{Name: "gen_tps_before", Value: mb, Unit: "tokens/s"}, model.Metric{Name: "gen_tps_after", Value: ma, Unit: "tokens/s"})
		}
	} else {
		msg += "; no preemption in the log yet, but new or growing requests will be preempted"
	}
	p.Report(model.Finding{
		Severity:       sev,
		Title:          "KV cache saturated: " + s.Name(),
		Message:        msg + ".",
		Recommendation: "Raise gpu_memory_utilization, use kv_cache_dtype=fp8, lower max_model_len or max_num_seqs, enable prefix caching, or add TP/PP / replicas.",
		Metrics:        metrics,
		Evidence:       []model.Evidence{{Rank: model.NoRank, Device: model.NoDevice, Stream: model.NoStream, Thread: -1, Start: a.Time, End: b.Time, Note: where}},
	})
	return true
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func capacity(p *detectors.Pass, j *model.JobLog, name string) {
	minConc := p.Param("min_concurrency")
	for _, c := range j.Capacity {
		if c.MaxConcurrency < 0 {
			continue
		}
		ev := []model.Evidence{model.LogEvidence(model.NoRank, 0, fmt.Sprintf("%s line %d", name, c.Line))}
		metrics := []model.Metric{{Name: "max_concurrency", Value: c.MaxConcurrency, Unit: "x"}, {Name: "tokens_per_request", Value: float64(c.MaxConcurrencyTokens), Unit: "tokens"}}
		kv := ""
		if c.KVTokens > 0 {
			kv = fmt.Sprintf(" (KV cache %d tokens)", c.KVTokens)
			metrics = append(metrics, model.Metric{Name: "kv_tokens", Value: float64(c.KVTokens), Unit: "tokens"})
		}
		switch {
		case c.MaxConcurrency < minConc:
			p.Report(model.Finding{
				Severity: model.SevWarning,
				Title:    "Low KV capacity at start-up",
				Message: fmt.Sprintf("%s: the KV cache%s holds only %.2f requests of %d tokens (below %.0f): full-length requests run nearly one at a time and decode batches stay small.",
					name, kv, c.MaxConcurrency, c.MaxConcurrencyTokens, minConc),
				Recommendation: "Lower max_model_len to what requests need, use kv_cache_dtype=fp8, raise gpu_memory_utilization, or add TP so weights take less of each GPU.",
				Metrics:        metrics, Evidence: ev,
			})
		case c.MaxNumSeqs > 0 && c.MaxConcurrency < float64(c.MaxNumSeqs):
			p.Report(model.Finding{
				Severity: model.SevInfo,
				Title:    "KV capacity below the configured batch",
				Message: fmt.Sprintf("%s: the KV cache%s holds %.2f requests of %d tokens while max_num_seqs is %d: the configured batch fills only with shorter requests.",
					name, kv, c.MaxConcurrency, c.MaxConcurrencyTokens, c.MaxNumSeqs),
				Recommendation: "Fine when requests are much shorter than max_model_len; otherwise see the KV levers (fp8 KV cache, max_model_len, TP).",
				Metrics:        append(metrics, model.Metric{Name: "max_num_seqs", Value: float64(c.MaxNumSeqs), Unit: "count"}), Evidence: ev,
			})
		}
	}
}

func ooms(p *detectors.Pass, j *model.JobLog, name string) {
	gib := float64(1 << 30)
	for _, e := range j.EventsOf("oom") {
		ev := []model.Evidence{model.LogEvidence(e.Rank, e.Time, fmt.Sprintf("%s line %d", name, e.Line))}
		var metrics []model.Metric
		add := func(n string, b int64) {
			if b >= 0 {
				metrics = append(metrics, model.Metric{Name: n, Value: float64(b) / gib, Unit: "GiB"})
			}
		}
		add("tried", e.TriedBytes)
		add("capacity", e.CapacityBytes)
		add("free", e.FreeBytes)
		add("allocated", e.AllocatedBytes)
		add("reserved_unallocated", e.ReservedUnallocBytes)
		msg := fmt.Sprintf("%s line %d: CUDA out of memory", name, e.Line)
		if e.GPU >= 0 {
			msg += fmt.Sprintf(" on GPU %d", e.GPU)
		}
		if e.TriedBytes >= 0 && e.CapacityBytes > 0 {
			msg += fmt.Sprintf(": tried %.2f GiB of %.2f GiB with %.2f GiB free", float64(e.TriedBytes)/gib, float64(e.CapacityBytes)/gib, float64(e.FreeBytes)/gib)
		}
		title := "CUDA out of memory"
		rec := "Lower the batch or sequence length, use activation checkpointing, or leave more room (gpu_memory_utilization) when another process shares the GPU."
		frag := e.ReservedUnallocBytes >= 0 && (float64(e.ReservedUnallocBytes) >= p.Param("frag_gib")*gib ||
			e.CapacityBytes > 0 && float64(e.ReservedUnallocBytes) >= p.Param("frag_fraction")*float64(e.CapacityBytes))
		if e.ReservedUnallocBytes >= 0 {
			msg += fmt.Sprintf("; %.2f GiB allocated by PyTorch, %.2f GiB reserved but unallocated", float64(e.AllocatedBytes)/gib, float64(e.ReservedUnallocBytes)/gib)
		}
		if frag {
			title = "CUDA out of memory from fragmentation"
			msg += ": the caching allocator holds enough memory, in blocks too fragmented for the request"
			rec = "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb on old PyTorch); avoid many differently-sized allocations in the loop."
		}
		p.Report(model.Finding{Severity: model.SevError, Title: title, Message: msg + ".", Recommendation: rec, Metrics: metrics, Evidence: ev})
	}
}
