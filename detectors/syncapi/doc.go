// Package syncapi is the sync-api detector: host threads blocked in device,
// stream and event synchronisation, synchronous copies and .item()-style
// host syncs in the steady state of a run.
//
// Pipeline place: cmd → detectors/all → syncapi → model. It reads API calls,
// CPU ranges (ops, NVTX, user annotations, steps) and GPU-side sync records
// of the common model, so it works the same on Nsight Systems and Kineto
// imports. Times are int64 ns.
package syncapi

const doc = `Finds host threads that wait for the GPU in the steady state of a run:
cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize (and their
driver/HIP forms), synchronous cudaMemcpy, and framework operators that copy a
value to the host (.item(), .cpu(), .tolist(), nonzero).

## How it decides

- The layer is **scheduling**: a host sync stops the CPU from queueing work, so
  the GPU drains and then waits for the host (the memory layer would also fit
  for synchronous copies; the memcpy rule covers their memory side).
- A blocking instance is an API call of class sync, or a memcpy call that is
  not the Async form. When the capture has no API calls at all (a CPU-only
  Kineto trace), operators that always synchronise on GPU inputs
  (aten::item, aten::_local_scalar_dense, aten::nonzero, aten::is_nonzero) are
  counted instead, with their whole duration, and the confidence is
  *inferred*.
- Only the steady state counts: instances that start between the start of
  step warmup_steps+1 (ProfilerStep#N) and the end of the last step when the
  trace has more steps than warmup_steps (what follows the last step is
  teardown, such as the profiler's final sync), otherwise after the first
  warmup_pct percent of the host span. A call nested in another blocking call
  on the same thread (a driver call inside its runtime call) is the same wait
  and counts once.
- Blocked time is the union of the blocking intervals per thread, summed over
  threads (thread time). The wall time is the steady part of the span of host
  activity (API calls and CPU ranges); the blocked share is the time in which
  at least one thread was blocked over that wall time. The finding is a
  warning when the share is at least warn_pct, info at least info_pct, and
  quiet below.
- The call site of an instance is the innermost CPU op, NVTX range or user
  annotation on the same thread that encloses it, climbing past
  implementation ops (aten::_local_scalar_dense, aten::_to_copy, aten::copy_)
  to the op the user called (aten::item, aten::to). The message lists the
  sites with the most blocked time; the evidence lists the longest instances
  with their thread, and device and stream when a GPU-side sync record or copy
  is correlated with them.

- **Weighted by the GPU idle it costs**: for each blocking instance (and for
  their union) the rule measures how long the device was idle with an empty
  launch queue during it (gpu_idle_ns on the evidence and the finding;
  launched-not-started kernels count as queued, as HTA's queue length). A
  wait while the GPU stays busy with queued work is harmless: when the GPU
  idle during the blocks is below warn_pct of the window the finding is at
  most info, whatever the blocked share. Blocks that start after the
  workload (after the last step, or after the last GPU activity when the
  capture marks no steps) are teardown and are not counted.

## How to fix

- Remove torch.cuda.synchronize() / cudaDeviceSynchronize from the training or
  decode loop; keep it only around code you time, or time with CUDA events.
- Do not call .item(), .cpu(), .tolist(), print() or bool() on GPU tensors
  every step: accumulate losses and metrics on the GPU and read them every N
  steps. Avoid data-dependent shapes (nonzero, masked_select, unique, boolean
  indexing) on the hot path, or give them a static size (nonzero_static).
- Replace cudaEventSynchronize with stream.wait_event / cudaStreamWaitEvent
  so that the GPU waits and the host keeps queueing.
- Use cudaMemcpyAsync from pinned memory (tensor.pin_memory(),
  .to(device, non_blocking=True)) instead of synchronous copies.
- torch.cuda.set_sync_debug_mode("warn") reports the Python lines that
  synchronise; CUDA Graphs and torch.compile(mode="reduce-overhead") remove
  many syncs from the loop.
`
