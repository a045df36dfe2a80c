package joblog

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tracedx/tracedx/model"
)

// result says what a grammar made of a line.
type result uint8

const (
	unknown  result = iota // not this grammar's line
	known                  // read (or warned about)
	needMore               // this grammar's line, cut short: join the next line
)

// kv is one "Key: value" field of a comma-separated stats line.
type kv struct{ k, v string }

// fields splits "A: 1, B: 2 reqs, C: 3%" into its fields. A field without
// ": " keeps its text in k and an empty v.
func fields(s string) []kv {
	var out []kv
	for _, f := range strings.Split(s, ", ") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), ","))
		if f == "" {
			continue
		}
		k, v, _ := strings.Cut(f, ": ")
		out = append(out, kv{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out
}

// num reads the leading number of v ("240.8 tokens/s", "8 reqs", "95.4%",
// "75,840"); pct divides a trailing-% value by 100. ok is false when v does
// not start with a number; na is true for "n/a".
func num(v string) (x float64, ok, na bool) {
	if v == "n/a" || v == "N/A" || v == "None" {
		return -1, true, true
	}
	end := 0
	for end < len(v) && (v[end] >= '0' && v[end] <= '9' || v[end] == '.' || v[end] == ',' || v[end] == '-' || v[end] == 'e' || v[end] == '+') {
		end++
	}
	t := strings.ReplaceAll(v[:end], ",", "")
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return -1, false, false
	}
	if strings.HasPrefix(v[end:], "%") {
		f /= 100
	}
	return f, true, false
}

func parseInt(v string) int64 {
	f, ok, na := num(strings.TrimSpace(v))
	if !ok || na {
		return -1
	}
	return int64(f)
}

func newStat(engine, id, kind string, d decor, n int) model.EngineStat {
	return model.EngineStat{Engine: engine, ID: id, Kind: kind, Time: d.time, HasTime: d.hasTime, Line: n, PromptTPS: -1, GenTPS: -1,
		Running: -1, Waiting: -1, Swapped: -1, KVUsage: -1, PrefixHit: -1, Tokens: -1, NewTokens: -1, CachedTokens: -1}
}

var reEngineID = regexp.MustCompile(`(?:Engine (\d+)|(\d+) Engines Aggregated):`)

// vllmStats reads vLLM's periodic stats line:
//
//	V0 (vllm/engine/metrics.py LoggingStatLogger, 0.4–0.10): "Avg prompt throughput: %.1f tokens/s,
//	  Avg generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: %d reqs, Pending: %d reqs,
//	  GPU KV cache usage: %.1f%%, CPU KV cache usage: %.1f%%[, Prefix cache hit rate: GPU: %.2f%%, CPU: %.2f%%]."
//	V1 (vllm/v1/metrics/loggers.py, 0.8+): "[Engine %03d: ]Avg prompt throughput: %.1f tokens/s,
//	  Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs,
//	  GPU KV cache usage: %.1f%%|n/a, Prefix cache hit rate: %.1f%%|n/a"
//	V1 0.11+ adds, after Waiting, "Deferred: %d reqs" and "Preemptions: %d"
//	  (requests preempted in the interval, printed when > 0), and with data
//	  parallelism "%d Engines Aggregated: " as the prefix. A Preemptions
//	  field becomes a preemption event with that count.
func (p *parser) vllmStats(s string, d decor, n int, final bool) result {
	i := strings.Index(s, "Avg prompt throughput:")
	if i < 0 {
		return unknown
	}
	engine := "vllm-v1"
	id := d.inst
	if m := reEngineID.FindStringSubmatch(s[:i]); m != nil {
		id = "Engine " + m[1]
		if m[2] != "" {
			id = m[2] + " Engines Aggregated"
		}
	}
	st := newStat(engine, id, "stats", d, n)
	preempt := int64(-1)
	var bad []string
	kvSeen, lastOK := false, true
	fs := fields(s[i:])
	for x, f := range fs {
		v, ok, na := num(f.v)
		lastOK = ok && f.v != ""
		switch f.k {
		case "Avg prompt throughput":
			st.PromptTPS = v
		case "Avg generation throughput":
			st.GenTPS = v
		case "Running":
			st.Running = int64(v)
		case "Waiting", "Pending":
			st.Waiting = int64(v)
			if f.k == "Pending" {
				engine = "vllm-v0"
			}
		case "Swapped":
			st.Swapped = int64(v)
			engine = "vllm-v0"
		case "Preemptions":
			preempt = int64(v)
		case "Deferred":
		case "GPU KV cache usage":
			kvSeen = true
			st.KVUsage = v
			lastOK = lastOK && (na || strings.HasSuffix(strings.TrimSuffix(f.v, "."), "%"))
		case "CPU KV cache usage":
			engine = "vllm-v0"
			lastOK = lastOK && strings.HasSuffix(strings.TrimSuffix(f.v, "."), "%")
		case "Prefix cache hit rate":
			pv := strings.TrimPrefix(f.v, "GPU: ")
			v, ok, na = num(pv)
			lastOK = ok && (na || strings.HasSuffix(strings.TrimSuffix(pv, "."), "%"))
			st.PrefixHit = v
		default:
			// An unknown field is a newer version's addition (ignored)
			// unless it is the cut end of a wrapped line.
			if x == len(fs)-1 && f.v == "" {
				lastOK = false
			}
			continue
		}
		if !ok {
			bad = append(bad, f.k)
		}
	}
	st.Engine = engine
	if (!kvSeen || !lastOK) && !final {
		return needMore
	}
	if st.PromptTPS < 0 || st.GenTPS < 0 || st.Running < 0 || len(bad) > 0 || !kvSeen {
		p.warn(n, "vLLM stats line cut short or unreadable (fields %s)", strings.Join(orMissing(bad), ", "))
		return known
	}
	p.stats.add(st)
	p.source(engine)
	if preempt > 0 {
		ev := newEvent("preemption", engine, d, n)
		ev.ID, ev.Count = id, preempt
		p.event(ev)
	}
	return known
}

// newEvent returns an event of kind with every number unknown.
func newEvent(kind, engine string, d decor, n int) model.EngineEvent {
	return model.EngineEvent{Kind: kind, Engine: engine, Rank: d.rank, ID: d.inst, Time: d.time, HasTime: d.hasTime, Line: n, Count: -1, GPU: -1,
		TriedBytes: -1, CapacityBytes: -1, FreeBytes: -1, AllocatedBytes: -1, ReservedUnallocBytes: -1, ReservedBytes: -1, Seconds: -1, Bytes: -1}
}

func orMissing(bad []string) []string {
	if len(bad) == 0 {
		return []string{"missing"}
	}
	return bad
}

// sglangBatch reads SGLang's scheduler batch lines (python/sglang/srt/managers/
// scheduler.py / scheduler_metrics_mixin.py, 0.3–0.5):
//
//	Prefill batch. #new-seq: %d, #new-token: %d, #cached-token: %d, [cache hit rate: %.2f%%, ]
//	  token usage: %.2f, #running-req: %d, #queue-req: %d[, ...]
//	Decode batch. #running-req: %d, #token: %d, token usage: %.2f, [cuda graph: %s, ]
//	  [accept len: %.2f, [accept rate: %.2f, ]]gen throughput (token/s): %.2f, #queue-req: %d[, ...]
//
// ("Decode batch," with a comma in late 2025 builds; trailing ", " kept.)
func (p *parser) sglangBatch(s string, d decor, n int, final bool) result {
	var kind string
	switch {
	case strings.HasPrefix(s, "Prefill batch"):
		kind = "prefill"
	case strings.HasPrefix(s, "Decode batch"):
		kind = "decode"
	default:
		return unknown
	}
	rest := strings.TrimLeft(s[len("Prefill batch"):], ".,")
	if !strings.Contains(rest, "#") {
		return unknown
	}
	st := newStat("sglang", d.inst, kind, d, n)
	accept, acceptRate := -1.0, -1.0
	var bad []string
	queueSeen := false
	for _, f := range fields(rest) {
		v, ok, _ := num(f.v)
		switch f.k {
		case "#running-req":
			st.Running = int64(v)
		case "#queue-req":
			st.Waiting = int64(v)
			queueSeen = true
		case "token usage", "full token usage":
			if st.KVUsage < 0 || f.k == "token usage" {
				st.KVUsage = v
			}
		case "gen throughput (token/s)":
			st.GenTPS = v
		case "input throughput (token/s)":
			st.PromptTPS = v
		case "#token":
			st.Tokens = int64(v)
		case "#new-token":
			st.NewTokens = int64(v)
		case "#cached-token":
			st.CachedTokens = int64(v)
		case "cache hit rate":
			st.PrefixHit = v
		case "accept len":
			accept = v
		case "accept rate":
			acceptRate = v
		default:
			continue
		}
		if !ok {
			bad = append(bad, f.k)
		}
	}
	if !queueSeen && !final {
		return needMore
	}
	if st.Running < 0 || len(bad) > 0 {
		p.warn(n, "SGLang %s batch line unreadable (fields %s)", kind, strings.Join(orMissing(bad), ", "))
		return known
	}
	p.stats.add(st)
	if accept >= 0 || acceptRate >= 0 {
		p.spec.add(model.SpecDecodeStat{Engine: "sglang", ID: d.inst, Time: d.time, HasTime: d.hasTime, Line: n, AcceptRate: acceptRate,
			MeanAcceptLen: accept, Accepted: -1, Drafted: -1, NumSpecTokens: -1})
	}
	p.source("sglang")
	return known
}

var (
	reSpecLen     = regexp.MustCompile(`Mean acceptance length: ([\d.]+)`)
	reSpecRate    = regexp.MustCompile(`Draft acceptance rate: ([\d.]+)(%?)`)
	reSpecAcc     = regexp.MustCompile(`Accepted: (\d+) tokens`)
	reSpecDrafted = regexp.MustCompile(`Drafted: (\d+) tokens`)
	reSpecPos     = regexp.MustCompile(`Per-position acceptance rate: ([\d.]+(?:, [\d.]+)*)`)
	reSpecV0K     = regexp.MustCompile(`Number of speculative tokens: (\d+)`)
	reSpecV0Acc   = regexp.MustCompile(`Number of accepted tokens: (\d+)`)
	reSpecV0Draft = regexp.MustCompile(`Number of draft tokens: (\d+)`)
	reSpecV0Emit  = regexp.MustCompile(`Number of emitted tokens: (\d+)`)
)

// specDecode reads speculative-decoding metrics:
//
//	V1 (vllm/v1/spec_decode/metrics.py, 0.8.5+): "SpecDecoding metrics: [Draft acceptance rate: %.1f%%, ]
//	  Mean acceptance length: %.2f, [Accepted throughput: ..., Drafted throughput: ..., ]Accepted: %d tokens,
//	  Drafted: %d tokens, Per-position acceptance rate: %s[, Avg Draft acceptance rate: %.1f%%]"
//	V0 (vllm/spec_decode/metrics.py): "Speculative metrics: Draft acceptance rate: %.3f, System efficiency: %.3f,
//	  Number of speculative tokens: %d, Number of accepted tokens: %d, Number of draft tokens: %d,
//	  Number of emitted tokens: %d."
func (p *parser) specDecode(s string, d decor, n int) result {
	v1 := strings.Contains(s, "SpecDecoding metrics:")
	v0 := strings.Contains(s, "Speculative metrics:")
	if !v1 && !v0 {
		return unknown
	}
	sd := model.SpecDecodeStat{Engine: "vllm-v1", ID: d.inst, Time: d.time, HasTime: d.hasTime, Line: n, AcceptRate: -1, MeanAcceptLen: -1,
		Accepted: -1, Drafted: -1, NumSpecTokens: -1}
	if m := reSpecRate.FindStringSubmatch(s); m != nil {
		sd.AcceptRate, _, _ = num(m[1] + m[2])
	}
	if v0 {
		sd.Engine = "vllm-v0"
		if m := reSpecV0K.FindStringSubmatch(s); m != nil {
			sd.NumSpecTokens = int(parseInt(m[1]))
		}
		if m := reSpecV0Acc.FindStringSubmatch(s); m != nil {
			sd.Accepted = parseInt(m[1])
		}
		if m := reSpecV0Draft.FindStringSubmatch(s); m != nil {
			sd.Drafted = parseInt(m[1])
		}
		if m := reSpecV0Emit.FindStringSubmatch(s); m != nil && sd.Drafted > 0 && sd.NumSpecTokens > 0 {
			steps := float64(sd.Drafted) / float64(sd.NumSpecTokens)
			sd.MeanAcceptLen = float64(parseInt(m[1])) / steps
		}
	} else {
		if m := reSpecLen.FindStringSubmatch(s); m != nil {
			sd.MeanAcceptLen, _, _ = num(m[1])
		}
		if m := reSpecAcc.FindStringSubmatch(s); m != nil {
			sd.Accepted = parseInt(m[1])
		}
		if m := reSpecDrafted.FindStringSubmatch(s); m != nil {
			sd.Drafted = parseInt(m[1])
		}
		if m := reSpecPos.FindStringSubmatch(s); m != nil {
			for _, x := range strings.Split(m[1], ", ") {
				f, _, _ := num(x)
				sd.PerPosition = append(sd.PerPosition, f)
			}
			sd.NumSpecTokens = len(sd.PerPosition)
		}
		if sd.AcceptRate < 0 && sd.Accepted >= 0 && sd.Drafted > 0 {
			sd.AcceptRate = float64(sd.Accepted) / float64(sd.Drafted)
		}
	}
	if sd.AcceptRate < 0 && sd.MeanAcceptLen < 0 {
		p.warn(n, "speculative-decoding metrics line without acceptance rate or length")
		return known
	}
	p.spec.add(sd)
	p.source(sd.Engine)
	return known
}

// startupWords gates the start-up regexps (most lines have none of these).
var startupWords = regexp.MustCompile(`blocks: |KV cache|KV Cache|concurrency|gpu_memory_utilization|init engine|Graph capturing|cuda graph|max_num_seqs|max_total_num_tokens|preempted|retracted`)

var (
	reBlocks     = regexp.MustCompile(`# (\w+) blocks: (\d+), # CPU blocks: (\d+)`)
	reKVSize     = regexp.MustCompile(`GPU KV cache size: ([\d,]+) tokens`)
	reMaxConc    = regexp.MustCompile(`Maximum concurrency for ([\d,]+) tokens per request: ([\d.,]+)x`)
	reKVMem      = regexp.MustCompile(`(?:Available KV cache memory: |reserved for KV Cache is )([\d.]+) ?([KMGT]i?B)`)
	reMemUtil    = regexp.MustCompile(`gpu_memory_utilization \(([\d.]+)\)`)
	reInit       = regexp.MustCompile(`init engine \(.*\) took ([\d.]+) seconds`)
	reGraph      = regexp.MustCompile(`Graph capturing finished in ([\d.]+) secs?(?:, took ([\d.]+) ?([KMGT]i?B))?`)
	reSGGraph    = regexp.MustCompile(`Capture cuda graph end\. Time elapsed: ([\d.]+) s(?:\. mem usage=([\d.]+) ?([KMGT]i?B))?`)
	reMaxSeqs    = regexp.MustCompile(`max_num_seqs['"]?\s*[:=]\s*(\d+)`)
	reSGTotal    = regexp.MustCompile(`max_total_num_tokens=(\d+)`)
	reSGRunning  = regexp.MustCompile(`max_running_requests=(\d+)`)
	rePreemptV0  = regexp.MustCompile(`is preempted by PreemptionMode\.(\w+) mode because there is not enough KV cache space`)
	reCumPreempt = regexp.MustCompile(`total_num_cumulative_preemption=(\d+)`)
	reRetract    = regexp.MustCompile(`#retracted_reqs: (\d+)`)
)

// startup reads start-up capacity and CUDA graph capture lines (vLLM V0
// executor_base.py / worker.py / model_runner.py, V1 kv_cache_utils.py /
// gpu_worker.py / gpu_model_runner.py; SGLang model_runner.py /
// cuda_graph_runner.py) and preemption warnings (vLLM V0 core/scheduler.py,
// SGLang "Decode out of memory happened. #retracted_reqs: N").
func (p *parser) startup(s string, d decor, n int) result {
	if !startupWords.MatchString(s) {
		return unknown
	}
	hit := ""
	capa := func(engine string) *model.EngineCapacity {
		hit = engine
		return p.capacityFor(engine, d.inst, n)
	}
	if m := reBlocks.FindStringSubmatch(s); m != nil {
		c := capa("vllm")
		c.GPUBlocks, c.CPUBlocks = parseInt(m[2]), parseInt(m[3])
	}
	if m := reKVSize.FindStringSubmatch(s); m != nil {
		capa("vllm").KVTokens = parseInt(m[1])
	}
	if m := reMaxConc.FindStringSubmatch(s); m != nil {
		c := capa("vllm")
		c.MaxConcurrencyTokens = parseInt(m[1])
		c.MaxConcurrency, _, _ = num(m[2])
	}
	if m := reKVMem.FindStringSubmatch(s); m != nil {
		capa("vllm").KVMemoryBytes = bytesOf(m[1], m[2])
	}
	if m := reMemUtil.FindStringSubmatch(s); m != nil {
		capa("vllm").GPUMemUtil, _, _ = num(m[1])
	}
	if m := reInit.FindStringSubmatch(s); m != nil {
		capa("vllm").InitSeconds, _, _ = num(m[1])
	}
	if m := reMaxSeqs.FindStringSubmatch(s); m != nil {
		capa("vllm").MaxNumSeqs = parseInt(m[1])
	}
	if m := reSGTotal.FindStringSubmatch(s); m != nil {
		capa("sglang").KVTokens = parseInt(m[1])
		if m := reSGRunning.FindStringSubmatch(s); m != nil {
			capa("sglang").MaxNumSeqs = parseInt(m[1])
		}
	}
	ev := newEvent("", "", d, n)
	if m := reGraph.FindStringSubmatch(s); m != nil {
		ev.Kind, ev.Engine = "graph-capture", "vllm"
		ev.Seconds, _, _ = num(m[1])
		if m[2] != "" {
			ev.Bytes = bytesOf(m[2], m[3])
		}
	} else if m := reSGGraph.FindStringSubmatch(s); m != nil {
		ev.Kind, ev.Engine = "graph-capture", "sglang"
		ev.Seconds, _, _ = num(m[1])
		if m[2] != "" {
			ev.Bytes = bytesOf(m[2], m[3])
		}
	} else if m := rePreemptV0.FindStringSubmatch(s); m != nil {
		ev.Kind, ev.Engine, ev.Mode, ev.Count = "preemption", "vllm-v0", m[1], 1
		if c := reCumPreempt.FindStringSubmatch(s); c != nil {
			ev.Message = "total_num_cumulative_preemption=" + c[1]
		}
	} else if m := reRetract.FindStringSubmatch(s); m != nil {
		ev.Kind, ev.Engine, ev.Mode, ev.Count = "preemption", "sglang", "retract", parseInt(m[1])
	}
	if ev.Kind != "" {
		p.event(ev)
		p.source(ev.Engine)
		return known
	}
	if hit != "" {
		p.source(hit)
		return known
	}
	return unknown
}

var (
	reOOMTried   = regexp.MustCompile(`Tried to allocate ([\d.]+) ?([KMGTP]i?B)`)
	reOOMNew     = regexp.MustCompile(`GPU (\d+) has a total capacity of ([\d.]+) ?([KMGTP]i?B) of which ([\d.]+) ?([KMGTP]i?B) is free`)
	reOOMPyTorch = regexp.MustCompile(`([\d.]+) ?([KMGTP]i?B) is allocated by PyTorch, and ([\d.]+) ?([KMGTP]i?B) is reserved by PyTorch but unallocated`)
	reOOMOld     = regexp.MustCompile(`\(GPU (\d+); ([\d.]+) ?([KMGTP]i?B) total capacity; ([\d.]+) ?([KMGTP]i?B) already allocated; ([\d.]+) ?([KMGTP]i?B) free; ([\d.]+) ?([KMGTP]i?B) reserved in total by PyTorch`)
)

// oom reads PyTorch's CUDA caching-allocator error (c10/cuda/CUDACachingAllocator.cpp):
//
//	2.1+: "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which
//	  1.23 GiB is free. [Process N has ... memory in use. ]Of the allocated memory 75.00 GiB is allocated by
//	  PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large
//	  try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
//	≤2.0: "CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB already
//	  allocated; 3.19 MiB free; 14.71 GiB reserved in total by PyTorch) If reserved memory is >> allocated ..."
func (p *parser) oom(s string, d decor, n int) result {
	if !strings.Contains(s, "out of memory") || !(strings.Contains(s, "CUDA") || strings.Contains(s, "HIP")) {
		return unknown
	}
	ev := newEvent("oom", "torch", d, n)
	if m := reOOMTried.FindStringSubmatch(s); m != nil {
		ev.TriedBytes = bytesOf(m[1], m[2])
	}
	if m := reOOMNew.FindStringSubmatch(s); m != nil {
		ev.GPU = int(parseInt(m[1]))
		ev.CapacityBytes = bytesOf(m[2], m[3])
		ev.FreeBytes = bytesOf(m[4], m[5])
	}
	if m := reOOMPyTorch.FindStringSubmatch(s); m != nil {
		ev.AllocatedBytes = bytesOf(m[1], m[2])
		ev.ReservedUnallocBytes = bytesOf(m[3], m[4])
		ev.ReservedBytes = ev.AllocatedBytes + ev.ReservedUnallocBytes
	}
	if m := reOOMOld.FindStringSubmatch(s); m != nil {
		ev.GPU = int(parseInt(m[1]))
		ev.CapacityBytes = bytesOf(m[2], m[3])
		ev.AllocatedBytes = bytesOf(m[4], m[5])
		ev.FreeBytes = bytesOf(m[6], m[7])
		ev.ReservedBytes = bytesOf(m[8], m[9])
		ev.ReservedUnallocBytes = ev.ReservedBytes - ev.AllocatedBytes
	}
	if strings.Contains(s, "Tried to allocate") && (ev.TriedBytes < 0 || ev.CapacityBytes < 0) {
		p.warn(n, "CUDA out-of-memory message with unreadable allocator numbers")
	}
	ev.Message = clip(strings.TrimSpace(s), 300)
	p.event(ev)
	p.source("torch-oom")
	return known
}

var units = map[string]float64{"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}

func bytesOf(v, unit string) int64 {
	f, ok, na := num(v)
	if !ok || na {
		return -1
	}
	return int64(f * units[unit])
}

// trtllmStats reads TensorRT-LLM iteration statistics printed as one JSON
// object per iteration: the Triton backend's in-flight batching stats
// (libtensorrtllm.cc: "Active Request Count", "Max KV cache blocks", "Used KV
// cache blocks", ...) and the executor API's IterationStats
// ("numActiveRequests", "numQueuedRequests", "kvCacheStats": {...}).
func (p *parser) trtllmStats(s string, d decor, n int, final bool) result {
	i := strings.IndexByte(s, '{')
	if i < 0 || !(strings.Contains(s, `"Active Request Count"`) || strings.Contains(s, `"Iteration Counter"`) ||
		strings.Contains(s, `"numActiveRequests"`) || strings.Contains(s, `"kvCacheStats"`)) {
		return unknown
	}
	obj, ok := balanced(s[i:])
	if !ok {
		if !final {
			return needMore
		}
		p.warn(n, "TensorRT-LLM iteration stats JSON is cut short")
		return known
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(obj), &m); err != nil {
		p.warn(n, "TensorRT-LLM iteration stats JSON: %v", err)
		return known
	}
	if !d.hasTime {
		ts, _ := m["Timestamp"].(string)
		if ts == "" {
			ts, _ = m["timestamp"].(string)
		}
		if t, err := time.Parse("01-02-2006 15:04:05", ts); err == nil {
			d.time, d.hasTime = model.Time(t.UnixNano()), true
		}
	}
	st := newStat("trtllm", d.inst, "iteration", d, n)
	getf := func(m map[string]any, k string) float64 {
		if v, ok := m[k].(float64); ok {
			return v
		}
		return -1
	}
	st.Running = int64(max(getf(m, "Active Request Count"), getf(m, "numActiveRequests")))
	st.Waiting = int64(getf(m, "numQueuedRequests"))
	used, total := getf(m, "Used KV cache blocks"), getf(m, "Max KV cache blocks")
	if kc, ok := m["kvCacheStats"].(map[string]any); ok {
		used, total = getf(kc, "usedNumBlocks"), getf(kc, "maxNumBlocks")
	}
	if used >= 0 && total > 0 {
		st.KVUsage = used / total
	}
	if total > 0 {
		c := p.capacityFor("trtllm", d.inst, n)
		c.GPUBlocks = int64(total)
		if tpb := getf(m, "Tokens per KV cache block"); tpb > 0 {
			c.KVTokens = int64(total * tpb)
		}
		if mr := max(getf(m, "Max Request Count"), getf(m, "maxNumActiveRequests")); mr > 0 {
			c.MaxNumSeqs = int64(mr)
		}
	}
	p.stats.add(st)
	p.source("trtllm")
	return known
}

func (p *parser) capacityFor(engine, id string, n int) *model.EngineCapacity {
	for i := range p.j.Capacity {
		if p.j.Capacity[i].Engine == engine {
			return &p.j.Capacity[i]
		}
	}
	p.j.Capacity = append(p.j.Capacity, model.NewEngineCapacity(engine, id, n))
	return &p.j.Capacity[len(p.j.Capacity)-1]
}

// balanced returns the JSON object at the start of s if its braces close.
func balanced(s string) (string, bool) {
	depth, inStr, esc := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return s[:i+1], true
			}
		}
	}
	return "", false
}
