package servingthroughput

import (
	"fmt"
	"path/filepath"
	"sort"

	"gonum.org/v1/gonum/stat"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// Detector is the serving-throughput rule.
var Detector = &detectors.Detector{
	ID:       "serving-throughput",
	Title:    "Inference serving throughput and request queue",
	Layer:    model.LayerApplication,
	Severity: model.SevWarning,
	Formats:  []model.Format{model.FormatJobLog},
	Params: []detectors.Param{
		{Name: "target_tps", Default: 0, Unit: "tokens/s", Doc: "generation throughput target per engine; 0 = off (a target depends on the deployment)"},
		{Name: "idle_fraction", Default: 0.1, Unit: "ratio", Doc: "samples below this fraction of the peak generation throughput are idle or ramp-up and left out of the steady state"},
		{Name: "queue_fraction", Default: 0.5, Unit: "ratio", Doc: "requests waiting in at least this fraction of the samples make a queue"},
		{Name: "kv_high", Default: 0.9, Unit: "ratio", Doc: "KV cache usage at or above which a queue is memory-bound"},
		{Name: "kv_low", Default: 0.7, Unit: "ratio", Doc: "KV cache usage below which a queue with a flat running count is scheduler-bound"},
		{Name: "queue_share", Default: 0.2, Unit: "ratio", Doc: "per-request logs (TGI): queue time at or above this share of the requests' total time is a queue"},
	},
	Doc: `Reads the periodic stats lines of inference engines (vLLM V0/V1 "Avg prompt
throughput … Running … Waiting … GPU KV cache usage", SGLang "Decode batch … gen
throughput … #queue-req", TensorRT-LLM iteration stats) and reports, per engine:

- a serving summary (info): generation and prompt throughput p50/p90 in the
  steady state (samples at ≥ idle_fraction of the peak; lower ones are idle
  periods or ramp-up and are counted apart), the peak, running and waiting
  requests (max), KV cache usage p50/max, preemptions, OOMs and the
  speculative-decoding acceptance when present;
- a request queue (warning): requests waiting in at least queue_fraction of
  the samples. Its cause is read from the same samples:
  KV usage ≥ kv_high while requests wait → memory-bound (the KV cache is
  full, admitting more would preempt); running count flat and KV usage below
  kv_low → scheduler-bound (max_num_seqs / max_num_batched_tokens cap the
  batch while memory is free); otherwise the engine is still admitting
  (running grows) at its prefill rate → prefill-bound;
- per-request logs (TGI router "Success" lines with total_time, queue_time,
  inference_time, time_per_token): a latency summary (info) and a queue
  (warning) when queue time is at least queue_share of the requests' time;
- throughput below target_tps (warning; off by default: a good number
  depends on the model, GPU and request mix, so there is no universal one).

## How to fix
- Scheduler-bound: raise max_num_seqs (vLLM) / max_running_requests
  (SGLang) and max_num_batched_tokens / chunked_prefill_size; memory is free.
- Memory-bound: more KV space (gpu_memory_utilization, FP8 KV cache
  kv_cache_dtype=fp8, a smaller max_model_len, prefix caching), or more GPUs
  (TP/PP, more replicas); see memory-pressure.
- Prefill-bound: a larger max_num_batched_tokens / chunked_prefill_size
  admits long prompts faster; disaggregated prefill or more replicas for
  sustained load.
- Below target: compare the steady state with the peak; idle periods mean
  the load generator, not the engine, is the limit.
`,
	Run: run,
}

func run(p *detectors.Pass) error {
	looked := false
	for _, t := range p.Set.Traces {
		j := t.JobLog
		if j == nil {
			continue
		}
		name := filepath.Base(t.Path)
		looked = requests(p, j, name) || looked
		if len(j.Stats) == 0 {
			continue
		}
		looked = true
		for _, s := range j.Series() {
			analyse(p, j, s, name)
		}
	}
	if !looked {
		p.NotMeasurable("no engine stats lines (vLLM, SGLang, TensorRT-LLM) or request timing lines (TGI) in the input")
	}
	return nil
}

// quantiles returns the p-quantiles of xs (sorted copy); nil for no values.
func quantiles(xs []float64, ps ...float64) []float64 {
	if len(xs) == 0 {
		return nil
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	out := make([]float64, len(ps))
	for i, q := range ps {
		out[i] = stat.Quantile(q, stat.Empirical, s, nil)
	}
	return out
}

func analyse(p *detectors.Pass, j *model.JobLog, s model.EngineSeries, name string) {
	st := s.Stats
	var gen, prompt, kv []float64
	peak := 0.0
	var runMax, waitMax int64 = -1, -1
	waitingSamples, known := 0, 0
	for _, x := range st {
		peak = max(peak, x.GenTPS)
		if x.PromptTPS >= 0 {
			prompt = append(prompt, x.PromptTPS)
		}
		if x.KVUsage >= 0 {
			kv = append(kv, x.KVUsage)
		}
		runMax, waitMax = max(runMax, x.Running), max(waitMax, x.Waiting)
		if x.Waiting >= 0 {
			known++
			if x.Waiting > 0 {
				waitingSamples++
			}
		}
	}
	idle := 0
	for _, x := range st {
		if x.GenTPS < 0 {
			continue
		}
		if x.GenTPS < p.Param("idle_fraction")*peak || x.GenTPS == 0 {
			idle++
			continue
		}
		gen = append(gen, x.GenTPS)
	}
	where := fmt.Sprintf("%s %s (lines %d-%d)", name, s.Name(), st[0].Line, st[len(st)-1].Line)
	ev := []model.Evidence{model.LogEvidence(model.NoRank, st[0].Time, where)}
	if st[len(st)-1].HasTime && st[0].HasTime {
		ev[0].End = st[len(st)-1].Time
	}
	metrics := []model.Metric{{Name: "samples", Value: float64(len(st)), Unit: "count"}}
	msg := fmt.Sprintf("%s: %d stats samples", where, len(st))
	if q := quantiles(gen, 0.5, 0.9); q != nil {
		msg += fmt.Sprintf("; generation %.1f tokens/s p50, %.1f p90 in the steady state (peak %.1f, %d idle/ramp samples)", q[0], q[1], peak, idle)
		metrics = append(metrics, model.Metric{Name: "gen_tps_p50", Value: q[0], Unit: "tokens/s"}, model.Metric{Name: "gen_tps_p90", Value: q[1], Unit: "tokens/s"},
			model.Metric{Name: "gen_tps_peak", Value: peak, Unit: "tokens/s"})
	}
	if q := quantiles(prompt, 0.5); q != nil {
		msg += fmt.Sprintf("; prompt %.1f tokens/s p50", q[0])
		metrics = append(metrics, model.Metric{Name: "prompt_tps_p50", Value: q[0], Unit: "tokens/s"})
	}
	if runMax >= 0 {
		msg += fmt.Sprintf("; running ≤ %d", runMax)
		metrics = append(metrics, model.Metric{Name: "running_max", Value: float64(runMax), Unit: "count"})
	}
	if waitMax >= 0 {
		msg += fmt.Sprintf(", waiting ≤ %d", waitMax)
		metrics = append(metrics, model.Metric{Name: "waiting_max", Value: float64(waitMax), Unit: "count"})
	}
	var kvQ []float64
	if kvQ = quantiles(kv, 0.5, 1); kvQ != nil {
		msg += fmt.Sprintf("; KV cache %.1f%% p50, %.1f%% max", 100*kvQ[0], 100*kvQ[1])
		metrics = append(metrics, model.Metric{Name: "kv_usage_p50", Value: 100 * kvQ[0], Unit: "%"}, model.Metric{Name: "kv_usage_max", Value: 100 * kvQ[1], Unit: "%"})
	}
	pre := 0
	for _, e := range j.EventsOf("preemption") {
		pre += int(max(e.Count, 1))
	}
	ooms := len(j.EventsOf("oom"))
	msg += fmt.Sprintf("; %d preempted request(s), %d OOM(s)", pre, ooms)
	metrics = append(metrics, model.Metric{Name: "preemptions", Value: float64(pre), Unit: "count"}, model.Metric{Name: "ooms", Value: float64(ooms), Unit: "count"})
	var acc []float64
	for _, sd := range j.Spec {
		if sd.AcceptRate >= 0 {
			acc = append(acc, sd.AcceptRate)
		}
	}
	if len(acc) > 0 {
		m := stat.Mean(acc, nil)
		msg += fmt.Sprintf("; speculative acceptance %.1f%% mean", 100*m)
		metrics = append(metrics, model.Metric{Name: "spec_acceptance", Value: 100 * m, Unit: "%"})
	}
	if j.StatsStride > 1 {
		msg += fmt.Sprintf(" (every %d-th stats line kept)", j.StatsStride)
	}
	p.Report(model.Finding{Severity: model.SevInfo, Title: "Serving summary: " + s.Name(), Message: msg + ".", Metrics: metrics, Evidence: ev})

	if known > 0 && waitMax > 0 && float64(waitingSamples) >= p.Param("queue_fraction")*float64(known) {
		queue(p, s, where, ev, waitingSamples, known, waitMax)
	}
	if target := p.Param("target_tps"); target > 0 && len(gen) > 0 {
		if q := quantiles(gen, 0.5); q[0] < target {
			p.Report(model.Finding{Severity: model.SevWarning, Title: "Generation throughput below target: " + s.Name(),
				Message:        fmt.Sprintf("%s: steady-state generation %.1f tokens/s p50 is below the target %.0f (peak %.1f).", where, q[0], target, peak),
				Recommendation: "Compare with the peak: if the engine reaches the target at its peak, the load (idle periods) is the limit; otherwise see the queue and memory findings.",
				Metrics:        []model.Metric{{Name: "gen_tps_p50", Value: q[0], Unit: "tokens/s"}, {Name: "target_tps", Value: target, Unit: "tokens/s"}},
				Evidence:       ev})
		}
	}
}

func queue(p *detectors.Pass, s model.EngineSeries, where string, ev []model.Evidence, waitingSamples, known int, waitMax int64) {
	var kvWait []float64
	var runLo, runHi int64 = -1, -1
	for _, x := range s.Stats {
		if x.Waiting > 0 {
			if x.KVUsage >= 0 {
				kvWait = append(kvWait, x.KVUsage)
			}
			if x.Running >= 0 {
				if runLo < 0 || x.Running < runLo {
					runLo = x.Running
				}
				runHi = max(runHi, x.Running)
			}
		}
	}
	kvMed := -1.0
	if q := quantiles(kvWait, 0.5); q != nil {
		kvMed = q[0]
	}
	flat := runHi >= 0 && float64(runHi-runLo) <= max(1, 0.1*float64(runHi))
	var cause, rec string
	switch {
	case kvMed >= p.Param("kv_high"):
		cause = fmt.Sprintf("memory-bound: KV cache usage %.0f%% (median while requests wait) leaves no room to admit them", 100*kvMed)
		rec = "Give the KV cache more room: gpu_memory_utilization, kv_cache_dtype=fp8, a smaller max_model_len, prefix caching, or more GPUs (TP/PP, replicas). See memory-pressure."
	case flat && kvMed >= 0 && kvMed < p.Param("kv_low"):
		cause = fmt.Sprintf("scheduler-bound: running stays at %d-%d while KV cache usage is only %.0f%%", runLo, runHi, 100*kvMed)
		rec = "Raise max_num_seqs (vLLM) / max_running_requests (SGLang) and max_num_batched_tokens: memory is free."
	default:
		cause = fmt.Sprintf("prefill-bound: the engine is still admitting requests (running %d→%d, KV %s) at its prefill rate", runLo, runHi, pct(kvMed))
		rec = "Raise max_num_batched_tokens / chunked_prefill_size to admit long prompts faster, or add replicas for sustained load."
	}
	metrics := []model.Metric{{Name: "waiting_max", Value: float64(waitMax), Unit: "count"},
		{Name: "waiting_samples", Value: float64(waitingSamples), Unit: "count", Num: float64(waitingSamples), Den: float64(known)}}
	if kvMed >= 0 {
		metrics = append(metrics, model.Metric{Name: "kv_usage_while_waiting", Value: 100 * kvMed, Unit: "%"})
	}
	p.Report(model.Finding{
		Severity:       model.SevWarning,
		Title:          "Requests queue: " + s.Name(),
		Message:        fmt.Sprintf("%s: requests wait in %d of %d samples (up to %d); %s.", where, waitingSamples, known, waitMax, cause),
		Recommendation: rec,
		Metrics:        metrics,
		Evidence:       ev,
	})
}

func pct(f float64) string {
	if f < 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}
