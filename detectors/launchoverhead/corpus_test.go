package launchoverhead

import (
	"math"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/internal/detectortest"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/kineto"
	"github.com/tracedx/tracedx/importers/nsys"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

// corpusWant is what a trace of the corpus must give, verified against the
// raw events (sqlite3 / jq over the file; the short and starved gap counts
// were recomputed independently from CUPTI_ACTIVITY_KIND_KERNEL/MEMCPY/MEMSET
// and the RUNTIME calls linked by correlationId).
type corpusWant struct {
	sev     model.Severity // -1: quiet
	starved int            // starved short gaps on the reported device (-1: not checked)
	why     string         // what the raw events show
}

var corpusWants = map[string]corpusWant{
	// 3,655 kernels with a median of 7.5 µs, each behind a ~7 µs
	// cudaLaunchKernel_v7000 that starts inside the gap (e.g. gap
	// [233155907, 233164515) ns, next launch at 233155727-233162705):
	// eager autograd of a small model, 21.4% of the span idle in 1,995
	// starved gaps.
	"cs336-a100-autograd-nvtx-sgemm-nsys2026.3.1.sqlite": {model.SevWarning, 1995, "launch-bound eager PyTorch"},
	// DLRM rank 7 on a V100: 3 µs kernels, 5 µs launches, 31.7% of the
	// single profiler step idle in 165 starved gaps.
	"param-dlrm-w8-rank7.pt.trace.json.gz": {model.SevWarning, 165, "tiny embedding/MLP kernels"},
	// 19,370 kernels (median 8 µs) in 5 steps, 11.4% idle in 6,912 starved gaps.
	"hta-df-index-resolver-w2-rank1-memory.json.gz": {model.SevWarning, 6912, "launch-bound steps"},
	// CuPy: 28,480 short gaps, but the queue holds ~766 kernels on average
	// (max 1,022, the driver's limit): the GPU is saturated, the gaps are
	// kernel-to-kernel latency.
	"gtls-kernel-heavy-nsys2023.1.sqlite": {-1, -1, "GPU-bound, queue full"},
	// HTA's reference: queue mean 812 and max 1,022 on stream 7; GPU-bound.
	"hta-ns-resolution-rank0.pt.trace.json.gz": {-1, -1, "GPU-bound, queue full"},
	// 5,916 short gaps, none with an empty queue (queue ~700 deep).
	"hta-negative-queue-length-w16-rank0.json.gz": {-1, 0, "GPU-bound, queue full"},
	// OpenACC, 1,000 kernels of ~21.8 ms: short gaps hold 0.1% of the span.
	"openacc-course-sync-nsys2022.4.1.sqlite": {-1, -1, "long kernels"},
	// 2,402 kernels of 40 µs queued 700+ deep.
	"sheet-sim-osrt-sampling-nsys2022.1.sqlite": {-1, -1, "GPU-bound, queue full"},
}

// corpusProducers: the producer of every nsys corpus trace with GPU work,
// from the names that prove it.
var corpusProducers = map[string]detectors.Producer{
	"cs336-a100-autograd-nvtx-sgemm-nsys2026.3.1.sqlite":                   detectors.ProducerPyTorch,    // NVTX aten:: ranges
	"cs336-ddp-nccl-2x3090-nsys2026.3.1.sqlite":                            detectors.ProducerPyTorch,    // at::native kernels
	"cs336-torchcompile-reduceoverhead-cudagraph-a100-nsys2024.6.2.sqlite": detectors.ProducerPyTorch,    // at::native kernels
	"cuda-kernels-memset-sync-nsys2024.5.4.sqlite":                         detectors.ProducerNativeCUDA, // ./ex3, GrayscaleKernel
	"gtls-kernel-heavy-nsys2023.1.sqlite":                                  detectors.ProducerCuPy,       // cupy_copy__float64_float64
	"legacy-openacc-nsys2020.3-beast.sqlite":                               detectors.ProducerOpenMP,     // __omp_offloading_ (clang), despite the file name
	"memcpy-heavy-nsys2022.2.sqlite":                                       detectors.ProducerNativeCUDA, // ./vecadd_gpu_256t_manyblocks_prefetch
	"memfusion-nvtx-4gpu-nsys2023.1.sqlite":                                detectors.ProducerTensorRT,   // *_execute_kernel_trt
	"nvfuser-nvtx-8gpu-nsys2024.6.2.sqlite":                                detectors.ProducerPyTorch,    // at::native kernels next to nvfuser_*
	"openacc-course-sync-nsys2022.4.1.sqlite":                              detectors.ProducerOpenACC,    // main_41_gpu
	"openmp-offload-nsys2023.3.1.sqlite":                                   detectors.ProducerOpenMP,     // nvkernel_solve_F1L204_2
	"pytorch-emit-nvtx-dlprof-nsys2022.1.sqlite":                           detectors.ProducerPyTorch,    // NVTX aten:: ranges
	"trsv-cusparse-nvtx-osrt-nsys2023.3.1.sqlite":                          detectors.ProducerNativeCUDA, // ./run_sparse
}

func TestCorpusLaunchOverhead(t *testing.T) {
	keep := func(base string) bool {
		_, ok := corpusWants[base]
		_, okp := corpusProducers[base]
		return ok || okp
	}
	seen := detectortest.CorpusTraces[importers.Options](t, nsys.New(), kineto.New(), keep, func(base string, tr *model.Trace) {
		if wp, ok := corpusProducers[base]; ok {
			if got := detectors.DetectProducer(tr); got.Producer != wp {
				t.Errorf("%s: producer %v (%s), want %v", base, got.Producer, got.Why, wp)
			}
		}
		w, ok := corpusWants[base]
		if !ok {
			return
		}
		res := detectors.Run(fixture.Set(tr), []*detectors.Detector{Detector}, detectors.Config{})
		switch {
		case w.sev < 0 && len(res.Findings) > 0:
			t.Errorf("%s (%s): want quiet, got %s", base, w.why, res.Findings[0].Title)
		case w.sev >= 0 && (len(res.Findings) != 1 || res.Findings[0].Severity != w.sev):
			t.Errorf("%s (%s): want one %v finding, got %+v", base, w.why, w.sev, res.Findings)
		case w.sev >= 0 && w.starved >= 0 && metric(res.Findings[0], "starved_gap_count") != float64(w.starved):
			t.Errorf("%s: starved gaps %v, want %d", base, metric(res.Findings[0], "starved_gap_count"), w.starved)
		case w.sev >= 0 && strings.Contains(res.Findings[0].Recommendation, "cudaStreamBeginCapture"):
			t.Errorf("%s: PyTorch trace got native CUDA advice", base)
		}
		if w.sev < 0 && w.starved == 0 {
			for _, d := range Analyze(tr, 50*model.Microsecond) {
				if d.StarvedCount != 0 {
					t.Errorf("%s: device %d: %d starved gaps, want 0", base, d.Device, d.StarvedCount)
				}
			}
		}
		if base == "hta-ns-resolution-rank0.pt.trace.json.gz" {
			// HTA's queue_length_summary for stream 7 (the only stream):
			// max 1022, mean 812.4 over its change points. We count
			// every linked activity (HTA drops the last step's).
			f := Analyze(tr, 50*model.Microsecond)[0].Feed
			if f.QueueMax != 1022 || math.Abs(f.QueueSampleMean-812.4)/812.4 > 0.05 {
				t.Errorf("queue max %d, sample mean %.1f; HTA: 1022, 812.4", f.QueueMax, f.QueueSampleMean)
			}
		}
	})
	names := map[string]bool{}
	for n := range corpusWants {
		names[n] = true
	}
	for n := range corpusProducers {
		names[n] = true
	}
	if seen != len(names) {
		t.Errorf("%d corpus files checked, %d expected", seen, len(names))
	}
}
