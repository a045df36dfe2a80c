// Package memcpy is the memcpy detector: synchronous copies, copies from or
// to pageable host memory, many tiny copies, and copies that run well below
// the bandwidth their link or device memory should give.
//
// Pipeline place: cmd → detectors/all → memcpy → model. It reads memory
// operations (kind, bytes, source and destination memory kind), the API calls
// that issued them (linked by correlation within its scope) and the device
// table, so it works on Nsight Systems and Kineto imports alike. Times are
// int64 ns, sizes bytes, bandwidths GB/s (1e9 bytes per second).
package memcpy

const doc = `Finds memory copies that waste time in the steady state of a run:
synchronous copies, copies from or to pageable host memory, many tiny copies,
and large copies that run well below the bandwidth of their link.

## How it decides

Only copies (not memsets; unified-memory migrations are checked apart, see
below) that start in the steady state count: from the start of step warmup_steps+1 (ProfilerStep#N)
to the end of the last step when the trace has more steps than warmup_steps
(what follows the last step is teardown, such as the profiler's final sync),
otherwise after the first warmup_pct percent of the span of host activity.
The wall time is that window's length, and call and copy times are clipped
to it. Each problem is its own finding:

- **Synchronous copies**: the API call linked to the copy by correlation is a
  synchronous form (cudaMemcpy, cudaMemcpy2D, hipMemcpy; not ...Async). As in
  Nsight Systems' cuda_memcpy_sync rule, device-to-device copies and
  host-to-device copies of at most 64 KiB are left out: those return to the
  host before the copy ends. Blocked time is the summed duration of the
  calls. Warning at warn_pct of the wall time, info at min_pct, quiet below.
- **Pageable memory**: the copy's host side is pageable (Nsight Systems
  srcKind/dstKind 0; Kineto "Memcpy HtoD (Pageable -> Device)"). The driver
  stages such copies through a pinned buffer: an Async call waits, and the
  copy runs at a fraction of the link rate. Cost is the sum over copies of
  the longer of call and copy; same thresholds.
- **Tiny copies**: at least small_min_count copies under small_bytes. Their
  time is almost all fixed overhead (a call of several µs and a copy of a
  few µs each, whatever the size). Info, warning when their cost reaches
  warn_pct of the wall time. The message gives the count per step when the
  trace has steps.
- **Bandwidth**: per device and direction, copies of at least bw_min_bytes
  (smaller ones are latency-bound) that have a known ceiling: host copies
  from or to pinned memory, and device-to-device copies. Achieved bandwidth
  is their bytes over their summed duration. Reported (info, confidence
  *estimated*) below bw_min_pct of:
  - host copies: the practical one-direction rate of the GPU's host link,
    PCIe Gen3/Gen4/Gen5 x16 ≈ 12/25/50 GB/s (NVLink-C2C on GH200/GB200
    ≈ 400 GB/s), from a small table of GPU names (Gen3 when the GPU is
    unknown, so that the check errs towards quiet), or pcie_gbps when set;
  - device-to-device copies: half the device memory bandwidth (a copy reads
    and writes every byte), from the capture's device record when it has one,
    else the name table (A100 1555, H100 SXM 3350, H200 4800, B200 8000 GB/s,
    ...); unknown GPUs are not checked.

- **Unified memory** (its own finding per device, over the whole capture:
  first-touch migrations are part of the cost): unified-memory migrations
  (Nsight Systems copy kinds "Unified Host-to-Device / Device-to-Host /
  Device-to-Device") with their count, bytes, time (metrics uvm_migrations,
  uvm_bytes, uvm_ns), direction and cause (user prefetch, page fault,
  speculative prefetch around a fault, eviction). Thrashing: a 2 MiB block
  of virtual addresses that moves to one side, back, and back again (two or
  more reversals of direction). A warning when blocks thrash, when
  fault-driven migrations take warn_pct of the capture, or when they take
  longer than all the device's kernels; info otherwise; quiet when every
  migration is an explicit prefetch (cudaMemPrefetchAsync).

The advice depends on what produced the trace (detectors.DetectProducer):
PyTorch-specific advice (pin_memory, non_blocking) only for PyTorch.

Without API calls (a GPU-only capture) synchronous copies cannot be told
apart; that part is reported not measurable and the others still run.

gpu_idle_ns (synchronous and pageable copies, on the finding and each
evidence item): the time the device ran no other work and had none queued
during the issuing calls, plus the copies' own time (the compute engines wait
for them). When that is below warn_pct of the window the finding is at most
info: a copy issued while the GPU is busy with queued work costs little.

## How to fix

- Pin host memory: tensor.pin_memory(), DataLoader(pin_memory=True),
  cudaHostAlloc / cudaMallocHost, or cudaHostRegister for existing buffers.
- Copy asynchronously: .to(device, non_blocking=True) / cudaMemcpyAsync on a
  side stream, and synchronise once, where the data is needed.
- Batch small copies: gather small tensors into one flat (pinned) buffer and
  copy it once; keep scalars, masks and indices on the GPU instead of
  round-tripping them every step; avoid .item()/.cpu() in loops.
- Capture steady loops in CUDA Graphs (torch.compile mode="reduce-overhead")
  so that per-copy launch overhead disappears.
- Unified memory: prefetch with cudaMemPrefetchAsync to the processor that
  touches the data next, give cudaMemAdvise hints (SetPreferredLocation,
  SetReadMostly, SetAccessedBy), or use explicit device memory and copies;
  OpenACC/OpenMP: data regions instead of managed memory.
- For low bandwidth: check the PCIe generation and width the GPU trained at
  (nvidia-smi -q), the NUMA node of the host buffer, and other traffic on the
  same link or copy engine.
`
