// Package breakdown computes the GPU time breakdown of a TraceSet: per rank
// and device the span, busy and idle time and the time of each class of work
// (computation, communication, memory) as unions of intervals, and per-name
// kernel totals.
//
// Two definitions are offered:
//
//   - "trace" (default): every kernel, memcpy and memset of the trace counts.
//     Span runs from the first GPU activity's start to the last one's end on
//     that device; busy is the union of all activity; computation is the union
//     of non-communication kernels; memory is the union of memcpy and memset
//     (TraceLens counts memsets as computation, we count them as memory);
//     communication is the union of communication kernels (NCCL/RCCL/...).
//     This matches TraceLens' gpu_timeline busy and idle time, except that
//     TraceLens counts only GPU activity inside the GPU-side ProfilerStep
//     annotation when the trace has one, while we count the whole trace.
//   - "hta": Holistic Trace Analysis' temporal breakdown. Only GPU activity
//     whose launch (matched by correlation id) starts before the start of the
//     last ProfilerStep is kept, all devices of a rank are taken together, and
//     the classes follow HTA's name patterns. Times stay in nanoseconds where
//     HTA rounds to microseconds, so expect differences of a few µs.
//
// Place in the pipeline: cmd → detectors/breakdown → model. Pure functions of
// the model; no output.
package breakdown
