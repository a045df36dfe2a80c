package joblog

import (
	"fmt"
	"strings"
)

// gen writes job-log fixtures line by line from the engines' format strings.
type gen struct {
	b   strings.Builder
	pre func(i int) string // decoration in front of line i
	n   int
}

func (g *gen) ln(format string, args ...any) {
	if g.pre != nil {
		g.b.WriteString(g.pre(g.n))
	}
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteByte('\n')
	g.n++
}

// raw writes a line with no decoration (a wrapped continuation).
func (g *gen) raw(s string) { g.b.WriteString(s + "\n") }

func (g *gen) String() string { return g.b.String() }

// nccl writes "host:pid:tid [dev] NCCL INFO msg".
func (g *gen) nccl(host string, dev int, kind, format string, args ...any) {
	g.ln("%s:%d:%d [%d] NCCL %s %s", host, 1000+dev, 1100+dev, dev, kind, fmt.Sprintf(format, args...))
}

// ncclInit writes a host's start-up block: version, bootstrap, net devices,
// network, rings, trees, channels and Init COMPLETE for ranks base..base+n-1.
func (g *gen) ncclInit(host string, base, n, world int, net, hca, sockIf string, gdr bool) {
	for d := 0; d < n; d++ {
		r := base + d
		if d == 0 {
			g.nccl(host, d, "INFO", "Bootstrap : Using %s:10.0.%d.1<0>", sockIf, base)
			g.nccl(host, d, "INFO", "NCCL version 2.21.5+cuda12.4")
		}
		switch net {
		case "IB":
			g.nccl(host, d, "INFO", "NET/IB : Using [0]%s:1/IB ; OOB %s:10.0.%d.1<0>", hca, sockIf, base)
		case "Socket":
			g.nccl(host, d, "INFO", "NET/IB : No device found.")
			g.nccl(host, d, "INFO", "NET/Socket : Using [0]%s:10.0.%d.1<0> [1]virbr0:192.168.122.1<0>", sockIf, base)
		case "OFI":
			g.nccl(host, d, "INFO", "NET/OFI Selected Provider is efa (found 4 nics)")
			net = "AWS Libfabric"
		}
		g.nccl(host, d, "INFO", "Using network %s", net)
		g.nccl(host, d, "INFO", "comm 0x55d5%04x rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0", r, r, world, world/n, n, d)
		g.nccl(host, d, "INFO", "Trees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d", (r+1)%world, r, (r+world-1)%world, (r+1)%world, r, (r+world-1)%world)
		g.nccl(host, d, "INFO", "Channel 00/02 :   %s", ringOrder(world))
		via := "P2P/IPC/read"
		if d == n-1 {
			via = "NET/" + net + "/0"
			if net == "IB" && gdr {
				via += "/GDRDMA"
			}
			g.nccl(host, d, "INFO", "Channel 00/0 : %d[%d] -> %d[0] [send] via %s", r, d, (r+1)%world, via)
			if net == "IB" {
				if gdr {
					g.nccl(host, d, "INFO", "GPU Direct RDMA Enabled for GPU %d / HCA 0 (distance 4 <= 5), read 1", d)
				} else {
					g.nccl(host, d, "INFO", "GPU Direct RDMA Disabled for HCA 0 '%s' (no module)", hca)
				}
			}
		} else {
			g.nccl(host, d, "INFO", "Channel 00/0 : %d[%d] -> %d[%d] via %s", r, d, r+1, d+1, via)
		}
		g.nccl(host, d, "INFO", "2 coll channels, 0 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer")
		g.nccl(host, d, "INFO", "ncclCommInitRank comm 0x55d5%04x rank %d nranks %d cudaDev %d nvmlDev %d busId %d000 commId 0xabc - Init COMPLETE", r, r, world, d, d, d+1)
	}
}

func ringOrder(n int) string {
	var s []string
	for i := 0; i < n; i++ {
		s = append(s, fmt.Sprintf("%d", i))
	}
	return strings.Join(s, " ")
}

// vllmV1 writes a V1 stats line (loggers.py).
func vllmV1(engine int, prompt, gen float64, run, wait int, kv, prefix string) string {
	return fmt.Sprintf("Engine %03d: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Waiting: %d reqs, GPU KV cache usage: %s, Prefix cache hit rate: %s",
		engine, prompt, gen, run, wait, kv, prefix)
}

// vllmV0 writes a V0 stats line (engine/metrics.py).
func vllmV0(prompt, gen float64, run, swap, pend int, kv float64) string {
	return fmt.Sprintf("Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: %d reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: %.1f%%.",
		prompt, gen, run, swap, pend, kv, 0.0)
}

func sglDecode(sep string, run, tokens int, usage, gen float64, queue int, extra string) string {
	return fmt.Sprintf("Decode batch%s #running-req: %d, #token: %d, token usage: %.2f, %sgen throughput (token/s): %.2f, #queue-req: %d, ", sep, run, tokens, usage, extra, gen, queue)
}

func sglPrefill(seqs, newTok, cached, run, queue int, usage float64) string {
	return fmt.Sprintf("Prefill batch. #new-seq: %d, #new-token: %d, #cached-token: %d, token usage: %.2f, #running-req: %d, #queue-req: %d", seqs, newTok, cached, usage, run, queue)
}

func oomNew(gpu int, tried, capGiB, free, alloc, unalloc string) string {
	return fmt.Sprintf("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free. Including non-PyTorch memory, this process has 78.50 GiB memory in use. Of the allocated memory %s is allocated by PyTorch, and %s is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
		tried, gpu, capGiB, free, alloc, unalloc)
}

// tgiLine writes a TGI router "Success" line (router/src/server.rs: the
// handler span's fields in Rust Duration Debug form).
func tgiLine(ts, route, total, validation, queue, inference, perToken string) string {
	return fmt.Sprintf("%s  INFO %s{parameters=GenerateParameters { best_of: None, temperature: Some(0.7), repetition_penalty: None, top_k: None, top_p: None, do_sample: true, max_new_tokens: Some(100), stop: [], truncate: None, seed: None } total_time=\"%s\" validation_time=\"%s\" queue_time=\"%s\" inference_time=\"%s\" time_per_token=\"%s\" seed=\"None\"}: text_generation_router::server: router/src/server.rs:322: Success",
		ts, route, total, validation, queue, inference, perToken)
}

// fixtures are the generated logs of the golden tests (one per grammar
// family); testdata/<name>.golden holds each one's model dump.
var fixtures = map[string]func() string{
	// Three hosts: IB with different HCAs on a and b, c falls back to
	// sockets and offers virbr0; P2P disabled by the environment; GDR off on
	// b; torchrun "[rankN]:" prefixes behind Kubernetes timestamps; a WARN.
	"nccl-3host-mixed": func() string {
		g := &gen{}
		host := 0
		g.pre = func(i int) string {
			return fmt.Sprintf("2025-03-01T10:00:%02d.%06d+01:00 [rank%d]:", i/100%60, i%1000000, host)
		}
		g.ncclInit("node-a", 0, 2, 6, "IB", "mlx5_0", "eth0", true)
		host = 2
		g.ncclInit("node-b", 2, 2, 6, "IB", "mlx5_1", "eth0", false)
		host = 4
		g.ncclInit("node-c", 4, 2, 6, "Socket", "", "eth0", false)
		g.nccl("node-c", 0, "INFO", "NCCL_P2P_DISABLE set by environment to 1")
		g.nccl("node-c", 1, "WARN", "NET/Socket : message truncated : receiving 4096 bytes instead of 1024")
		g.pre = nil
		g.ln("\x1b[32m[default0]:node-a:1000:1100 [0] NCCL INFO Connected all rings\x1b[0m")
		return g.String()
	},
	// c10d: 4 ranks, ranks 0-2 time out on SeqNum 42 (mid-run), rank 3
	// never enqueued it; PyTorch 2.5 "[PG ID ..]" and 2.1 "[Rank N]"
	// prefixes, Slurm "N: " labels, Open MPI tags, glog timestamps, a
	// stuck watchdog and NCCL error strings.
	"c10d-midrun-hang": func() string {
		g := &gen{}
		for r := 0; r < 3; r++ {
			g.ln("%d: [rank%d]:[E1103 14:02:%02d.%06d ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=1800000) ran for 1800%03d milliseconds before timing out.",
				r, r, 10+r, 123456*r, r, 40+r*7)
		}
		for r := 0; r < 3; r++ {
			g.ln("%d: [rank%d]:[E1103 14:02:%02d.500000 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: 42, last enqueued NCCL work: 42, last completed NCCL work: 41.", r, r, 10+r, r)
		}
		g.ln("[1,3]<stderr>:[rank3]:[E1103 14:10:00.000000 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 3] Timeout at NCCL work: 41, last enqueued NCCL work: 41, last completed NCCL work: 41.")
		g.ln("[rank3]:[E1103 14:10:01.000000 ProcessGroupNCCL.cpp:1423] [PG ID 0 PG GUID 0(default_pg) Rank 3] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives.")
		g.ln("[E ProcessGroupNCCL.cpp:475] [Rank 1] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
		g.ln("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.14.3")
		g.ln("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5")
		g.ln("ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
		g.ln("[E ProcessGroupNCCL.cpp:563] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST) ran for 10 milliseconds before timing out.")
		return g.String()
	},
	// vLLM V0 behind Ray worker prefixes: stats (Swapped/Pending, CPU KV
	// usage), RECOMPUTE and SWAP preemptions, "# GPU blocks", V0
	// speculative metrics, graph capture without memory, both OOM formats.
	"vllm-v0": func() string {
		g := &gen{}
		g.pre = func(i int) string { return fmt.Sprintf("INFO 05-14 09:%02d:%02d metrics.py:341] ", i/6, i*10%60) }
		g.ln("# GPU blocks: 2810, # CPU blocks: 512")
		g.ln("Graph capturing finished in 14 secs.")
		for i, kv := range []float64{45.0, 91.5, 97.2, 99.0, 98.4} {
			g.ln("%s", vllmV0(1200, 310-float64(i)*20, 64, i, i*3, kv))
		}
		g.pre = func(i int) string {
			return fmt.Sprintf("(RayWorkerWrapper pid=4242, ip=10.1.2.3) WARNING 05-14 09:01:%02d scheduler.py:1089] ", i)
		}
		g.ln("Sequence group 17 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1")
		g.ln("Sequence group 19 is preempted by PreemptionMode.SWAP mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_cache_utilization or tensor_parallel_size to provide more KV cache memory.")
		g.pre = func(i int) string { return "INFO 05-14 09:02:00 metrics.py:373] " }
		g.ln("Speculative metrics: Draft acceptance rate: 0.312, System efficiency: 0.244, Number of speculative tokens: 5, Number of accepted tokens: 3120, Number of draft tokens: 10000, Number of emitted tokens: 4880.")
		g.pre = nil
		g.ln("[rank1]: %s", oomNew(1, "2.00 GiB", "79.15 GiB", "1.25 GiB", "60.10 GiB", "17.40 GiB"))
		g.ln("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; 14.56 GiB already allocated; 3.19 MiB free; 14.71 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.")
		g.ln("INFO 05-14 09:03:00 metrics.py:341] Avg prompt throughput: ??? tokens/s, Avg generation throughput: 1.0 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.0%%, CPU KV cache usage: 0.0%%.")
		// Ray's bare task prefix.
		g.ln("(pid=4243, ip=10.1.2.4) WARNING 05-14 09:04:00 scheduler.py:1089] Sequence group 21 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=51")
		return g.String()
	},
	// vLLM V1 in Docker: two engines (DP), a stats line wrapped twice by
	// the terminal, "n/a" values, start-up capacity lines with a
	// max_num_seqs, spec-decode metrics in both V1 layouts, ANSI colours.
	"vllm-v1-docker": func() string {
		g := &gen{}
		g.pre = func(i int) string {
			return fmt.Sprintf("2025-06-01T08:00:%02d.%09dZ (EngineCore_DP%d pid=77) ", i, i*1000+7, i%2)
		}
		g.ln("INFO 06-01 08:00:00 [arg_utils.py:1200] non-default args: {'model': 'm', 'max_num_seqs': 128, 'gpu_memory_utilization': 0.9}")
		g.ln("INFO 06-01 08:00:01 [gpu_worker.py:276] Available KV cache memory: 18.50 GiB")
		g.ln("INFO 06-01 08:00:02 [kv_cache_utils.py:716] GPU KV cache size: 151,552 tokens")
		g.ln("INFO 06-01 08:00:03 [kv_cache_utils.py:720] Maximum concurrency for 32,768 tokens per request: 4.62x")
		g.ln("INFO 06-01 08:00:04 [gpu_model_runner.py:2000] Graph capturing finished in 11 secs, took 0.61 GiB")
		g.ln("INFO 06-01 08:00:05 [core.py:170] init engine (profile, create kv cache, warmup model) took 48.31 seconds")
		g.pre = func(i int) string {
			return fmt.Sprintf("2025-06-01T08:01:%02d.000000000Z (APIServer pid=1) \x1b[1;36mINFO\x1b[0m 06-01 08:01:%02d [loggers.py:118] ", i, i)
		}
		for i := 0; i < 4; i++ {
			g.ln("%s", vllmV1(i%2, 800, 1500+float64(i)*10, 64, 0, fmt.Sprintf("%.1f%%", 60+float64(i)), "35.0%"))
		}
		line := vllmV1(0, 0, 1400, 60, 0, "61.0%", "36.0%")
		g.ln("%s", line[:70])
		g.raw(line[70:150])
		g.raw(line[150:])
		g.ln("%s", vllmV1(1, 0, 0, 0, 0, "n/a", "n/a"))
		// kubectl logs --prefix --timestamps.
		pre := g.pre
		g.pre = nil
		g.ln("[pod/vllm-0/vllm] 2025-06-01T08:01:09.000000000Z INFO 06-01 08:01:09 [loggers.py:118] %s", vllmV1(0, 0, 1390, 59, 1, "62.0%", "36.0%"))
		g.pre = pre
		// 0.11+: Deferred and Preemptions fields, the DP aggregate prefix.
		g.ln("Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 1310.2 tokens/s, Running: 58 reqs, Waiting: 6 reqs, Deferred: 2 reqs, Preemptions: 3, GPU KV cache usage: 98.7%%, Prefix cache hit rate: 36.0%%")
		g.ln("2 Engines Aggregated: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2620.4 tokens/s, Running: 116 reqs, Waiting: 12 reqs, GPU KV cache usage: 97.1%%, Prefix cache hit rate: 36.0%%")
		g.ln("SpecDecoding metrics: Draft acceptance rate: 71.3%%, Mean acceptance length: 3.14, Accepted: 1426 tokens, Drafted: 2000 tokens, Per-position acceptance rate: 0.905, 0.783, 0.681, 0.483")
		g.ln("SpecDecoding metrics: Mean acceptance length: 1.42, Accepted throughput: 20.10 tokens/s, Drafted throughput: 96.00 tokens/s, Accepted: 201 tokens, Drafted: 960 tokens, Per-position acceptance rate: 0.350, 0.050, 0.020, 0.000, Avg Draft acceptance rate: 20.9%%")
		return g.String()
	},
	// TGI router: requests whose queue time grows to most of their total
	// (a saturated server), every Duration unit, ANSI colours, a
	// generate_stream and a chat_completions span, a line with a broken
	// duration.
	"tgi": func() string {
		g := &gen{}
		g.ln("2024-06-05T08:10:00.000000Z  INFO text_generation_router: router/src/main.rs:420: Serving revision abc of model m")
		for i, q := range []string{"85.6µs", "120ms", "1.5s", "4.25s", "6s"} {
			g.ln("%s", tgiLine(fmt.Sprintf("2024-06-05T08:10:%02d.%06dZ", 10+i, i*1000), "generate", fmt.Sprintf("%.2fs", 2.07+float64(i)*1.4), "370.3µs", q, "2.07s", "20.7ms"))
		}
		g.ln("\x1b[2m2024-06-05T08:10:20.000000Z\x1b[0m \x1b[32m INFO\x1b[0m %s", tgiLine("", "generate_stream", "900ms", "1.2ms", "400ns", "899ms", "9ms")[1:])
		g.ln("%s", tgiLine("2024-06-05T08:10:21.000000Z", "chat_completions", "1.1s", "2ms", "100ms", "998ms", "10ms"))
		g.ln("%s", tgiLine("2024-06-05T08:10:22.000000Z", "generate", "1.1s", "2ms", "soon", "998ms", "10ms"))
		return g.String()
	},
	// SGLang (2024 and 2025 layouts, DP/TP tags, accept len, retraction,
	// capacity and graph capture) and TensorRT-LLM iteration stats (Triton
	// backend JSON hard-wrapped, executor API JSON), plus a malformed line.
	"sglang-trtllm": func() string {
		g := &gen{}
		g.ln("[2025-04-02 11:00:00 TP0] max_total_num_tokens=524288, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=256, context_len=32768")
		g.ln("[2025-04-02 11:00:09 TP0] Capture cuda graph end. Time elapsed: 8.52 s. mem usage=0.42 GB. avail mem=12.31 GB.")
		g.ln("[11:00:10 TP0] %s", sglPrefill(4, 8192, 291, 1, 38, 0.04))
		g.ln("[2025-04-02 11:00:11 DP1 TP1] %s", sglDecode(".", 32, 120000, 0.93, 2810.5, 12, "cuda graph: True, "))
		g.ln("[2025-04-02 11:00:12 DP1 TP1] %s", sglDecode(",", 32, 121000, 0.95, 2790.0, 14, "cuda graph: True, accept len: 2.41, accept rate: 0.47, "))
		g.ln("[2025-04-02 11:00:13 DP1 TP1] Decode out of memory happened. #retracted_reqs: 3, #new_token_ratio: 0.7000 -> 1.0000")
		g.ln("[2025-04-02 11:00:14 TP0] Decode batch. #running-req: x, #token: 1, token usage: 0.10, gen throughput (token/s): 1.00, #queue-req: 0")
		g.ln(`I0402 11:00:15.100000 20559 libtensorrtllm.cc:1205] {"Active Request Count":12,"Context Requests":1,"Free KV cache `)
		g.raw(`blocks":100,"Generation Requests":11,"Iteration Counter":7,"Max KV cache blocks":1000,"Max Request Count":64,"Scheduled Requests":12,"Timestamp":"04-02-2025 11:00:15","Tokens per KV cache block":64,"Used KV cache`)
		g.raw(` blocks":900}`)
		g.ln(`[TensorRT-LLM][INFO] {"cpuMemUsage":1024,"gpuMemUsage":4096,"iter":8,"iterLatencyMS":12.5,"kvCacheStats":{"freeNumBlocks":50,"maxNumBlocks":1000,"tokensPerBlock":32,"usedNumBlocks":950},"maxNumActiveRequests":64,"numActiveRequests":30,"numQueuedRequests":9,"timestamp":"04-02-2025 11:00:16"}`)
		g.ln(`I0402 11:00:17.000000 20559 libtensorrtllm.cc:1205] {"Active Request Count":1,"Max KV cache blocks"`)
		// TensorRT-LLM's Python logger with an MPI rank, and its C++ logger.
		g.ln("[04/02/2025-11:00:18] [TRT-LLM] [MPI_Rank 1] [E] %s", oomNew(1, "1.00 GiB", "79.15 GiB", "0.50 GiB", "77.00 GiB", "0.40 GiB"))
		g.ln(`[TensorRT-LLM][INFO] {"iter":9,"kvCacheStats":{"maxNumBlocks":1000,"usedNumBlocks":990},"numActiveRequests":31,"numQueuedRequests":12}`)
		return g.String()
	},
}
