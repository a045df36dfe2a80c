// Package kineto imports PyTorch Profiler (Kineto) trace JSON — the
// Chrome-trace files written by torch.profiler (`*.pt.trace.json[.gz]`) —
// into the common model.
//
// Pipeline place: importers → model. The CLI reaches it through the
// registry in importers/all; tests and fuzzing call parse directly.
//
// Layers, one direction: the raw layer reads JSON into typed events
// (walk.go: top level and traceEvents; event.go: one event; scan.go: bytes;
// parallel.go: the multi-core pipeline; header.go: top-level keys other than
// traceEvents), the builder maps events to model records (build.go), and
// the post-pass joins and links them (link.go). FuzzEvent fuzzes the raw
// event parser, FuzzBuild the builder and post-pass without JSON, FuzzParse
// the whole.
//
// Reading: a byte-level scanner over one large, refilling buffer parses each
// event straight from the buffer (no document tree, no generic maps: only
// the args keys the model needs are read, the rest are skipped while being
// checked). Past 8 MiB of events, batches of whole events are parsed on
// all cores and handled in stream order (parallel.go); whatever the
// pipeline is unsure of goes back to the sequential loop, so the result
// is the same byte for byte. Memory is bounded by the records kept (plus a
// few MiB of batches in flight). Gzip input is inflated
// in a separate goroutine that hands over 4 MiB chunks. Header keys
// (deviceProperties, distributedInfo, baseTimeNanoseconds, versions) may
// come before or after traceEvents; a base time is added at the end, so
// there is no second pass.
//
// Units: ts and dur are µs written as integers or decimals; their text is
// converted exactly to int64 ns (no float64: 19-digit values stay exact).
// Model times are Unix epoch ns (Clock.EpochKnown) when the file holds
// epoch µs or a baseTimeNanoseconds.
//
// Mapping: cpu_op/Operator → RangeCPUOp; user_annotation → RangeUser;
// ProfilerStep#N (under user_annotation or, 2020–21, Operator) → RangeStep;
// python_function → RangePython; gpu_user_annotation → RangeGPUAnnotation;
// cuda_runtime/Runtime (also ROCm hip*), cuda_driver, mtia_runtime →
// APICall (runtime, driver, accel); kernel/Kernel and mtia_ccp_events →
// Kernel (MTIA devices get DeviceAccel); gpu_memcpy/Memcpy,
// gpu_memset/Memset → MemOp; cuda_sync → SyncEvent; [memory] instants →
// MemEvent; the Trace span → Capture; NCCL/RCCL kernels and
// record_param_comms with collective args → Collective. cuda_profiler_range
// records (CUPTI range-profiler mode: one per kernel, counters in args) are
// kept as GPU annotations on their (device, stream) lane, with a Caps note;
// their counters are not imported. overhead, fwdbwd and unknown categories
// are dropped (unknown ones with one summary warning each). Devices are
// those with activity; deviceProperties only describes them.
//
// Linking: args.correlation on API calls and GPU ops (CorrScope 0); when a
// GPU op lacks it, the ac2g/async flow whose f lands on the op's
// (device, stream, ts) supplies it (and likewise an s flow for an API call).
// External id is kept as written, except in 2022–23 builds where the GPU- and
// runtime-side External id is only the correlation id: there (detected when
// nearly all GPU ops have ExternalID == Correlation) each runtime call takes
// the External id of the innermost cpu_op enclosing it on its thread, and
// its GPU ops take the call's, with a Caps note saying so.
//
// Errors: a file that is not JSON, has a syntax error or is truncated gives
// an importers.InputError "byte N"; a spoiled record (missing ts, bad
// number, negative dur, wrong type, unknown ph) is skipped with a warning
// "event N (byte M)".
//
// Ownership: the importer owns the trace it returns; it calls Finalize.
package kineto
