// Package launchoverhead is the launch-overhead detector: GPU idle time
// hidden in gaps too short for kernel-gap to count, on devices that the host
// cannot keep fed (tiny kernels, an empty launch queue).
//
// Pipeline place: cmd → detectors/all → launchoverhead → detectors → model.
// It reads kernels, memory operations and the API calls that launched them
// (linked by correlation), through detectors.DeviceActivities and detectors.Feed.
// Times are int64 ns; the threshold parameter is in microseconds. Owned by
// the scheduling detectors.
package launchoverhead

const doc = `Finds devices that are launch or latency bound: the GPU is idle much of
the time, not in a few long gaps but in thousands of short ones (shorter than
kernel-gap's min_gap_us, 50 µs by default, so kernel-gap does not count them),
while the launch queue is empty: the host cannot submit kernels as fast as the
GPU finishes them.

## How it decides

Per device, over the span from its first GPU activity (kernel, copy, memset)
to its last, or over the profiler steps when the capture marks steps (the
steady state):

- **Short gaps**: stretches no longer than min_gap_us in which no activity of
  the device ran. Their count and total idle time are reported.
- **Launch queue** (as HTA computes its queue length): an activity joins the
  queue when the API call that launched it starts and leaves it when it starts
  on the GPU. A gap is *starved* when the queue was empty at the moment the GPU
  went idle: nothing had been submitted yet, the host was late. A gap with
  work queued is the GPU waiting on something else (another stream, an event)
  and is not counted against the host. The mean (over time and, as HTA
  reports it, over the queue's change points) and the maximum depth are
  reported, and the share of time the queue was empty.
- **Host rate vs GPU rate**: kernels per second, the median kernel duration,
  and the median duration of the launch calls (cudaLaunchKernel,
  cuLaunchKernel, hipLaunchKernel, graph launches) of the device's kernels. A
  median kernel shorter than the median launch call means the GPU consumes
  kernels faster than one host thread can issue them.
- **Severity** follows the idle share of the span held by starved short gaps:
  a warning at warn_pct, an error at error_pct, info at info_pct; quiet below,
  and quiet with fewer than min_gaps starved short gaps.
- The evidence shows the parts of the span (a tenth each) with the most
  starved short-gap idle, with the queue depth there.

Without launch calls in the capture (a GPU-only trace) starved gaps cannot be
told from dependency waits: the rule says so instead of guessing.

The advice depends on what produced the trace (detectors.DetectProducer):
PyTorch, JAX/XLA, CuPy, TensorRT, Triton, OpenACC, OpenMP offload, Julia or
native CUDA.

## How to fix

- Submit fewer, larger kernels: fuse elementwise chains (torch.compile, XLA,
  cupy.fuse, kernel fusion in CUDA C++), raise the batch size or the work per
  kernel.
- Remove the per-kernel launch cost: capture the repeated step in a CUDA Graph
  (torch.compile(mode="reduce-overhead"), torch.cuda.graphs, XLA command
  buffers, cudaStreamBeginCapture / cudaGraphLaunch, TensorRT with CUDA
  graphs), or use a persistent kernel that loops over the work.
- Keep the host ahead of the GPU: no synchronisation inside the loop, async
  queues in OpenACC (async clause) and OpenMP (nowait), less Python work per
  launched kernel.
`
