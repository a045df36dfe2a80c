package kernelgap

import (
	"slices"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/internal/detectortest"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/kineto"
	"github.com/tracedx/tracedx/importers/nsys"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// corpusCauses: the causes of the five largest gaps (evidence order) of the
// kernel-gap finding of the lowest device, per corpus trace. Entries marked
// "raw:" were checked against the raw events (sqlite3 on the nsys export,
// Python over the Kineto JSON) with the events named; the others were read
// off the evidence detail and context, which name the deciding call or range.
var corpusCauses = map[string][]string{
	// raw: 47.76 ms cudaLaunchKernel_v7000 (corr 134) covering the gap, with
	// fopen/fread/fwrite OS calls inside it (module load through the JIT
	// cache); the next four: 1.3-8.4 ms cudaMallocAsync_v11020 calls.
	"trsv-cusparse-nvtx-osrt-nsys2023.3.1.sqlite": {"lazy-init", "lazy-init", "lazy-init", "lazy-init", "lazy-init"},
	// raw: NVTX KernelExecutor::compileFusion (346.7 ms) > Nvrtc::CompileProgram;
	// then 121 ms of cuInit / cuGetProcAddress storms / cudaFree with a
	// 23 ms stretch without CUDA calls and no NVTX; then 9-13 ms
	// cudaLaunchKernel_v7000 calls (first launch of reduce_kernel).
	"nvfuser-nvtx-8gpu-nsys2024.6.2.sqlite": {"jit-compile", "host-compute", "lazy-init", "lazy-init", "lazy-init"},
	// raw: the next kernel's cudaLaunchKernel_v7000 (corr 133, add_parallel)
	// runs 41 ms and covers the 8.7 ms gap; the two short gaps: kernels
	// queued 46 ms / 101 µs before the gap behind cudaEventSynchronize.
	"test-cuda-osrt-nsys2026.1.1.sqlite": {"lazy-init", "dependency-wait", "dependency-wait"},
	// raw: cudaLaunchKernel_v7000 (corr 126, kernVectorAdd) takes 1.04 ms,
	// the kernel starts 1.1 ms after it returns (first launch); then two
	// cudaMemcpy_v3020 covering their gaps.
	"cupti-overhead-fileaccess-nsys2025.5.2.sqlite": {"lazy-init", "memcpy-blocked", "memcpy-blocked"},
	// raw: cuMemAllocManaged 20.26 ms covering the gap; cuMemcpyHtoDAsync_v2
	// of 512 MB pageable memory blocking 125 ms, the copy starting 4.2 ms in.
	"openmp-offload-nsys2023.3.1.sqlite": {"lazy-init", "memcpy-blocked", "memcpy-blocked", "lazy-init", "memcpy-blocked"},
	// raw: 196 ms without any CUDA call on the rank's thread; NVTX MPI_Recv
	// (36 ms) and two MPI_Send (11 ms) cover 30% of it, the rest is
	// untraced host time; then cudaMalloc ×3 and cudaMemcpy.
	"pipit-mpi-cuda-fullschema-callchains-nsys2022.2.sqlite": {"host-compute", "host-compute", "host-compute", "host-compute", "memcpy-blocked"},
	// raw: 46.8 ms without any CUDA call (no NVTX, no OS-runtime trace in
	// the capture) before cudaLaunchKernel_v7000 of I420ToRGB.
	"cuda-kernels-memset-sync-nsys2024.5.4.sqlite": {"host-compute", "host-compute", "host-compute", "host-compute", "host-compute"},
	// raw (device 0): warm-up NVTX ends, cudaDeviceSynchronize_v3020 returns,
	// then 766.5 ms without a CUDA call on thread 13096 inside NVTX
	// distributed_training; the lazy-init gaps are cuLibraryLoadData (63 ms).
	"cs336-ddp-nccl-2x3090-nsys2026.3.1.sqlite": {"host-compute", "host-compute", "lazy-init", "lazy-init", "host-compute"},
	// Eager autograd: cudaLaunchKernel/cudaMemsetAsync start inside each
	// gap (see launch-overhead's corpus test).
	"cs336-a100-autograd-nvtx-sgemm-nsys2026.3.1.sqlite":                   {"launch-bound", "launch-bound", "launch-bound", "launch-bound", "launch-bound"},
	"cs336-torchcompile-reduceoverhead-cudagraph-a100-nsys2024.6.2.sqlite": {"launch-bound", "launch-bound"},
	"cutlass-osrt-sampling-nsys2023.2.sqlite":                              {"memcpy-blocked", "memcpy-blocked", "launch-bound"},
	// CuPy: host quiet for 70 ms between kernel bursts (no NVTX in capture).
	"gtls-kernel-heavy-nsys2023.1.sqlite": {"host-compute", "host-compute", "host-compute", "host-compute", "host-compute"},
	// 2.25 ms without CUDA calls after a cudaMemcpy returned (OS call putc).
	"legacy-gpudb-osrt-sampling-nsys2021.2.sqlite": {"host-compute", "host-compute", "memcpy-blocked", "launch-bound", "memcpy-blocked"},
	// OpenMP offload (clang): 9-20 ms of host work between target regions.
	"legacy-openacc-nsys2020.3-beast.sqlite":     {"host-compute", "host-compute", "host-compute", "sync-blocked", "host-compute"},
	"openacc-course-sync-nsys2022.4.1.sqlite":    {"sync-blocked", "sync-blocked", "sync-blocked", "sync-blocked", "lazy-init"},
	"pytorch-emit-nvtx-dlprof-nsys2022.1.sqlite": {"launch-bound", "sync-blocked", "memcpy-blocked", "launch-bound", "lazy-init"},
	"sheet-sim-osrt-sampling-nsys2022.1.sqlite":  {"host-compute", "memcpy-blocked", "memcpy-blocked", "memcpy-blocked", "memcpy-blocked"},

	// raw: enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__
	// (user_annotation, -400 µs to +1006 µs) covers the 1.08 ms gap.
	"param-dlrm-w8-rank3.pt.trace.json.gz": {"data-loading", "launch-bound", "launch-bound", "sync-blocked", "launch-bound"},
	"param-dlrm-w8-rank0.pt.trace.json.gz": {"launch-bound", "launch-bound", "launch-bound", "launch-bound", "sync-blocked"},
	"param-dlrm-w8-rank7.pt.trace.json.gz": {"launch-bound", "launch-bound", "launch-bound", "launch-bound", "launch-bound"},
	// raw: Memset (Device) launched by cudaGraphLaunch 64.7 ms before the
	// gap, after cudaStreamWaitEvent, while thread 4515 sits in a 158 ms
	// cudaDeviceSynchronize: the graph waited for an event.
	"hta-negative-queue-length-w16-rank0.json.gz": {"dependency-wait", "dependency-wait", "memcpy-blocked", "dependency-wait", "dependency-wait"},
	// raw: resolve_future_token_ids_kernel launched by hipLaunchKernel 43.6 µs
	// into the 463 ms gap, right after hipStreamWaitEvent, started at its
	// end; the host meanwhile sits in hipMemcpyWithStream (the case).
	"tracelens-sglang-qwen3-8b-decode-mi300.json.gz": {"dependency-wait", "launch-bound", "launch-bound", "memcpy-blocked", "launch-bound"},
	// raw: cudaLaunchKernel of aten::bitwise_not takes 23.7 ms (first
	// launch); the second gap is aten::addmm's cudaMalloc + cudaFree 1.9 ms +
	// cudaFree 10.9 ms (cuBLAS start-up).
	"switchtransformers-a100-withstack-2threads-memory.json.gz": {"lazy-init", "lazy-init", "lazy-init", "lazy-init", "lazy-init"},
	// raw: aten::unflatten_dense_tensors runs 15.25 ms on the CPU with no
	// CUDA call, after cudaStreamWaitEvent.
	"hta-nccl-parser-config-rank0.json.gz": {"host-compute", "host-compute", "host-compute", "host-compute", "host-compute"},
	// 50-60 ms gaps covered by enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__.
	"kineto-tbplugin-resnet50-2021-01-barelist.pt.trace.json.gz": {"data-loading", "data-loading", "data-loading", "data-loading", "data-loading"},
	"tracelens-vllm-decode-graph-capture-mi300.pt.trace.json.gz": {"jit-compile", "launch-bound", "launch-bound", "launch-bound"},
	"hta-amd-mi250-rocm62.json.gz":                               {"lazy-init", "launch-bound", "memcpy-blocked", "launch-bound", "launch-bound"},
	"hta-ns-resolution-rank0.pt.trace.json.gz":                   {"launch-bound", "launch-bound", "launch-bound", "launch-bound"},
	"kineto-tbplugin-gpu-metrics-input-2021.json.gz":             {"launch-bound", "launch-bound", "launch-bound", "launch-bound", "launch-bound"},
	"tracelens-h100-bert-small.json.gz":                          {"launch-bound", "launch-bound", "sync-blocked", "launch-bound", "launch-bound"},
	"tracelens-h100-qwen1.5-0.5b-chat.json.gz":                   {"sync-blocked", "launch-bound", "sync-blocked", "launch-bound", "launch-bound"},
	"hta-trace-diff-control-w8-rank3.json.gz":                    {"host-compute", "host-compute", "host-compute", "host-compute", "host-compute"},
	"hta-df-index-resolver-w2-rank1-memory.json.gz":              {"host-compute", "host-compute", "host-compute", "host-compute", "host-compute"},
	"hta-sampled-w128-rank0.json.gz":                             {"dependency-wait", "dependency-wait", "dependency-wait", "host-compute", "host-compute"},
}

func TestCorpusGapCauses(t *testing.T) {
	keep := func(base string) bool { _, ok := corpusCauses[base]; return ok }
	seen := detectortest.CorpusTraces[importers.Options](t, nsys.New(), kineto.New(), keep, func(base string, tr *model.Trace) {
		want := corpusCauses[base]
		res := detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
		var f *model.Finding
		for i := range res.Findings {
			if g := &res.Findings[i]; f == nil || g.Evidence[0].Device < f.Evidence[0].Device {
				f = g
			}
		}
		if f == nil {
			t.Errorf("%s: no kernel-gap finding", base)
			return
		}
		var got []string
		for i, e := range f.Evidence {
			if i == 5 {
				break
			}
			got = append(got, e.Cause)
			if e.Cause == CauseUnknown.String() && len(tr.APICalls) > 0 {
				t.Errorf("%s: gap %d is unknown although the capture has host calls: %s", base, i, e.Note)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: top causes %q, want %q", base, got, want)
		}
	})
	if seen != len(corpusCauses) {
		t.Errorf("%d corpus files checked, %d expected", seen, len(corpusCauses))
	}
}
