package model

import (
	"strconv"
	"strings"
)

// FormatJobLog is a text log of a distributed job or an inference server
// (NCCL_DEBUG lines, PyTorch c10d watchdog messages, vLLM / SGLang /
// TensorRT-LLM stats, OOM errors). The joblog importer fills Trace.JobLog.
const FormatJobLog Format = "joblog"

// JobLog holds what a job / inference-server log says. Numbers a line does
// not print are -1 (NaN is never used: dumps and JSON stay plain).
type JobLog struct {
	// Lines counts logical lines (wrapped lines joined); Known counts the
	// lines a grammar recognised.
	Lines, Known int
	// Sources are the grammars met, sorted: "nccl", "c10d", "vllm-v0",
	// "vllm-v1", "sglang", "trtllm", "torch-oom".
	Sources []string
	// WorldSize is the largest rank count the log states (NCCL nranks,
	// torchrun WORLD_SIZE); 0 when unknown. Ranks are the ranks seen, sorted.
	WorldSize int
	Ranks     []int

	// NCCL sums the NCCL_DEBUG lines of the whole log; Hosts splits them per host.
	NCCL  NCCLFacts
	Hosts []JobHost

	// Watchdog holds c10d / ProcessGroupNCCL messages in file order.
	Watchdog []WatchdogEvent
	// Stats are engine stats lines in file order (decimated for huge logs,
	// see StatsStride).
	Stats []EngineStat
	// StatsStride > 1 says only every StatsStride-th stats line was kept.
	StatsStride int
	// Spec are speculative-decoding metrics lines in file order.
	Spec []SpecDecodeStat
	// Events are preemptions, OOMs, CUDA graph captures and start-up
	// capacity lines, in file order (capped; Dropped counts the rest).
	Events  []EngineEvent
	Dropped int
	// Capacity is the start-up capacity per engine, merged from its lines.
	Capacity []EngineCapacity
	// Requests are per-request timing lines (TGI router "Success" lines),
	// in file order; huge logs are thinned the way Stats are, with a stride
	// of their own that StatsStride does not give (the import note names
	// the larger of the two).
	Requests []RequestStat
}

// RequestStat is one finished request's timing as an engine logs it
// (seconds; -1 when not printed).
type RequestStat struct {
	// Engine is the grammar ("tgi"); Route the handler ("generate",
	// "generate_stream", "chat_completions", ...).
	Engine, Route string
	Time          Time
	HasTime       bool
	Line          int
	// Total = validation + queue + inference; TimePerToken = inference /
	// generated tokens.
	Total, Validation, Queue, Inference, TimePerToken float64
}

// JobHost is what the NCCL lines of one host say.
type JobHost struct {
	Host string
	// Devices are the CUDA devices of the "[dev]" field, sorted.
	Devices []int
	// Ranks are NCCL ranks seen on this host (from "r[d] -> r[d]" channel
	// lines and "rank N" init lines), sorted.
	Ranks []int
	// Bootstrap are the interfaces of "Bootstrap : Using if:addr".
	Bootstrap []string
	// SocketIfs are the interfaces of "NET/Socket : Using [0]if:addr ...".
	SocketIfs []string
	// HCAs are the IB devices of "NET/IB : Using [0]mlx5_0:1/IB ..." ("mlx5_0:1").
	HCAs  []string
	Facts NCCLFacts
}

// WatchdogEvent is one PyTorch distributed (c10d) error line.
type WatchdogEvent struct {
	// Kind: "timeout" (Watchdog caught collective operation timeout),
	// "last-work" (Timeout at / Exception detected ... last enqueued /
	// last completed), "stuck" (watchdog got stuck), "failed" (Some NCCL
	// operations have failed or timed out), "cuda-error", "system-error",
	// "internal-error", "remote-error" (NCCL error strings).
	Kind string
	Rank int    // NoRank when unknown
	PG   string // process group as printed ("0", "1", "default_pg"); "" when absent
	Host string
	Time Time
	// HasTime is false when the line carries no timestamp.
	HasTime bool
	Line    int
	// WorkNCCL fields (-1 when not printed).
	SeqNum            int64
	Op                string
	NumelIn, NumelOut int64
	TimeoutMs         int64
	RanForMs          int64
	// "last enqueued / completed NCCL work" (-1 when not printed); AtWork
	// is the work the message is about.
	AtWork, LastEnqueued, LastCompleted int64
	// StuckSec is the heartbeat timeout of "watchdog got stuck for N seconds".
	StuckSec int64
	Message  string
}

// EngineStat is one periodic stats line of an inference engine.
type EngineStat struct {
	// Engine is the grammar ("vllm-v0", "vllm-v1", "sglang", "trtllm");
	// ID names the engine instance ("000", "TP0", "DP1"), "" when single.
	Engine, ID string
	// Kind: "stats" (vLLM), "prefill" / "decode" (SGLang), "iteration" (TensorRT-LLM).
	Kind    string
	Time    Time
	HasTime bool
	Line    int
	// Throughputs in tokens/s.
	PromptTPS, GenTPS float64
	// Requests running, waiting (vLLM Waiting/Pending, SGLang #queue-req),
	// swapped (vLLM V0).
	Running, Waiting, Swapped int64
	// KVUsage and PrefixHit are fractions (0..1).
	KVUsage, PrefixHit float64
	// Tokens: SGLang #token (tokens held), NewTokens: SGLang #new-token,
	// CachedTokens: SGLang #cached-token.
	Tokens, NewTokens, CachedTokens int64
}

// SpecDecodeStat is one speculative-decoding metrics line.
type SpecDecodeStat struct {
	Engine, ID string
	Time       Time
	HasTime    bool
	Line       int
	// AcceptRate is the draft acceptance rate (0..1); MeanAcceptLen the mean
	// number of tokens emitted per target step (bonus token included).
	AcceptRate, MeanAcceptLen float64
	Accepted, Drafted         int64
	// NumSpecTokens is k (tokens proposed per step); -1 when unknown.
	NumSpecTokens int
	PerPosition   []float64
}

// EngineEvent is one event line of an engine or framework.
type EngineEvent struct {
	// Kind: "preemption", "oom", "graph-capture".
	Kind       string
	Engine, ID string
	Rank       int
	Time       Time
	HasTime    bool
	Line       int
	// Preemption: Mode ("RECOMPUTE", "SWAP", "" for V1 / SGLang retract),
	// Count (cumulative count when printed, else -1).
	Mode  string
	Count int64
	// OOM (bytes, -1 when not printed): the request, the device's capacity,
	// what was free, allocated and reserved-but-unallocated by PyTorch.
	GPU                                  int
	TriedBytes, CapacityBytes, FreeBytes int64
	AllocatedBytes, ReservedUnallocBytes int64
	ReservedBytes                        int64
	// Graph capture: seconds and bytes.
	Seconds float64
	Bytes   int64
	Message string
}

// EngineCapacity is the start-up capacity of one engine (-1 = not printed).
type EngineCapacity struct {
	Engine, ID string
	Line       int
	// GPUBlocks / CPUBlocks: vLLM V0 "# GPU blocks" / "# cuda blocks".
	GPUBlocks, CPUBlocks int64
	// KVTokens: vLLM V1 "GPU KV cache size: N tokens", SGLang max_total_num_tokens.
	KVTokens int64
	// MaxConcurrency for MaxConcurrencyTokens tokens per request.
	MaxConcurrency       float64
	MaxConcurrencyTokens int64
	// KVMemoryBytes: "Available KV cache memory" / "reserved for KV Cache".
	KVMemoryBytes int64
	// MaxNumSeqs is the configured batch (vLLM max_num_seqs, SGLang
	// max_running_requests) when the log prints it.
	MaxNumSeqs int64
	// GPUMemUtil is gpu_memory_utilization (0..1) when printed.
	GPUMemUtil float64
	// InitSeconds: "init engine ... took N seconds".
	InitSeconds float64
}

// NewEngineCapacity returns a capacity with every number unknown.
func NewEngineCapacity(engine, id string, line int) EngineCapacity {
	return EngineCapacity{Engine: engine, ID: id, Line: line, GPUBlocks: -1, CPUBlocks: -1, KVTokens: -1, MaxConcurrency: -1,
		MaxConcurrencyTokens: -1, KVMemoryBytes: -1, MaxNumSeqs: -1, GPUMemUtil: -1, InitSeconds: -1}
}

func dumpJobLog(p func(string, ...any), j *JobLog) {
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	q := strconv.Quote
	tm := func(t Time, has bool) string {
		if !has {
			return "-"
		}
		return strconv.FormatInt(int64(t), 10)
	}
	p("joblog lines=%d known=%d sources=%s world=%d ranks=%v\n", j.Lines, j.Known, strings.Join(j.Sources, ","), j.WorldSize, j.Ranks)
	n := &j.NCCL
	p("  nccl version=%q networks=%q info=%d warn=%d transports=%v netdevs=%q env=%q\n", n.Version, n.Networks, n.InfoLines, n.WarnLines, n.TransportUse, n.NetDevices, n.Env)
	p("  nccl rings=%d coll=%d p2p=%d init=%d/%d nodes=%d gdr=%d/%d p2pdisabled=%t noibverbs=%t ofi=%q\n", n.RingChannels, n.CollChannels, n.P2PChannels,
		n.InitComplete, n.InitRanks, n.Nodes, n.GDREnabled, n.GDRDisabled, n.P2PDisabledHint, n.NoIBVerbs, n.OFIProvider)
	for _, w := range n.Warnings {
		p("  nccl warn %s\n", q(w))
	}
	p("hosts %d\n", len(j.Hosts))
	for _, h := range j.Hosts {
		p("  host %s devices=%v ranks=%v bootstrap=%q socket=%q hcas=%q networks=%q transports=%v info=%d warn=%d\n", q(h.Host), h.Devices, h.Ranks,
			h.Bootstrap, h.SocketIfs, h.HCAs, h.Facts.Networks, h.Facts.TransportUse, h.Facts.InfoLines, h.Facts.WarnLines)
	}
	p("watchdog %d\n", len(j.Watchdog))
	for _, w := range j.Watchdog {
		p("  line %d %s rank=%d pg=%q host=%q t=%s seq=%d op=%q numel=%d/%d timeout=%d ran=%d at=%d enq=%d done=%d stuck=%d %s\n", w.Line, w.Kind, w.Rank, w.PG, w.Host,
			tm(w.Time, w.HasTime), w.SeqNum, w.Op, w.NumelIn, w.NumelOut, w.TimeoutMs, w.RanForMs, w.AtWork, w.LastEnqueued, w.LastCompleted, w.StuckSec, q(w.Message))
	}
	p("engine stats %d stride=%d\n", len(j.Stats), j.StatsStride)
	for _, s := range j.Stats {
		p("  line %d %s/%s %s t=%s prompt=%s gen=%s run=%d wait=%d swap=%d kv=%s prefix=%s tokens=%d new=%d cached=%d\n", s.Line, s.Engine, s.ID, s.Kind,
			tm(s.Time, s.HasTime), g(s.PromptTPS), g(s.GenTPS), s.Running, s.Waiting, s.Swapped, g(s.KVUsage), g(s.PrefixHit), s.Tokens, s.NewTokens, s.CachedTokens)
	}
	p("spec decode %d\n", len(j.Spec))
	for _, s := range j.Spec {
		pos := make([]string, len(s.PerPosition))
		for i, x := range s.PerPosition {
			pos[i] = g(x)
		}
		p("  line %d %s/%s t=%s accept=%s len=%s accepted=%d drafted=%d k=%d pos=[%s]\n", s.Line, s.Engine, s.ID, tm(s.Time, s.HasTime), g(s.AcceptRate),
			g(s.MeanAcceptLen), s.Accepted, s.Drafted, s.NumSpecTokens, strings.Join(pos, " "))
	}
	p("events %d dropped=%d\n", len(j.Events), j.Dropped)
	for _, e := range j.Events {
		p("  line %d %s %s/%s rank=%d t=%s mode=%q count=%d gpu=%d tried=%d cap=%d free=%d alloc=%d unalloc=%d reserved=%d sec=%s bytes=%d %s\n", e.Line, e.Kind,
			e.Engine, e.ID, e.Rank, tm(e.Time, e.HasTime), e.Mode, e.Count, e.GPU, e.TriedBytes, e.CapacityBytes, e.FreeBytes, e.AllocatedBytes,
			e.ReservedUnallocBytes, e.ReservedBytes, g(e.Seconds), e.Bytes, q(e.Message))
	}
	if len(j.Requests) > 0 {
		p("requests %d\n", len(j.Requests))
		for _, r := range j.Requests {
			p("  line %d %s/%s t=%s total=%s validation=%s queue=%s inference=%s per_token=%s\n", r.Line, r.Engine, r.Route, tm(r.Time, r.HasTime),
				g(r.Total), g(r.Validation), g(r.Queue), g(r.Inference), g(r.TimePerToken))
		}
	}
	p("capacity %d\n", len(j.Capacity))
	for _, c := range j.Capacity {
		p("  line %d %s/%s gpu_blocks=%d cpu_blocks=%d kv_tokens=%d maxconc=%s@%d kv_bytes=%d max_num_seqs=%d util=%s init=%s\n", c.Line, c.Engine, c.ID,
			c.GPUBlocks, c.CPUBlocks, c.KVTokens, g(c.MaxConcurrency), c.MaxConcurrencyTokens, c.KVMemoryBytes, c.MaxNumSeqs, g(c.GPUMemUtil), g(c.InitSeconds))
	}
}

// EngineSeries is the stats of one engine instance, in file order.
type EngineSeries struct {
	Engine, ID string
	Stats      []EngineStat
}

// Name is "vllm-v1 Engine 000", "sglang TP0" or the engine alone.
func (s EngineSeries) Name() string {
	if s.ID == "" {
		return s.Engine
	}
	return s.Engine + " " + s.ID
}

// Series groups Stats per (Engine, ID) in first-seen order.
func (j *JobLog) Series() []EngineSeries {
	var out []EngineSeries
	idx := map[[2]string]int{}
	for _, s := range j.Stats {
		k := [2]string{s.Engine, s.ID}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, EngineSeries{Engine: s.Engine, ID: s.ID})
		}
		out[i].Stats = append(out[i].Stats, s)
	}
	return out
}

// EventsOf returns the events of one kind, in file order.
func (j *JobLog) EventsOf(kind string) []EngineEvent {
	var out []EngineEvent
	for _, e := range j.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// LogEvidence points at a log line (no device, stream or thread); start and
// end are the line's time (0 when it has none).
func LogEvidence(rank int, t Time, note string) Evidence {
	return Evidence{Rank: rank, Device: NoDevice, Stream: NoStream, Thread: -1, Start: t, End: t, Note: note}
}
