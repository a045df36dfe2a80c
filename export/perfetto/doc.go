// Package perfetto writes a trace (or a job's set of traces) as Chrome
// trace-event JSON, the format that ui.perfetto.dev and chrome://tracing open,
// with tracedx's findings marked on the timeline. It is what
// `tracedx export --to perfetto` writes.
//
// Place in the pipeline: importers → model (+ findings from detectors) → here.
// It never computes findings; it draws the ones it is given.
//
// Layout of the output:
//   - one process per device of each rank ("rank R · GPU D: NAME"), one thread
//     per stream (tid = stream number); kernels, memory operations and GPU
//     annotations are complete ("X") events on their stream;
//   - one process per host process of each rank, its threads named; API calls
//     and ranges (operators, steps, NVTX, Python frames) are "X" events, marks
//     are instant ("i") events;
//   - flow events ("s"/"f", category "launch") from each API call to the kernel
//     or memory operation it issued (matched by correlation id within its
//     scope);
//   - counter ("C") events for sampled counters, on their device's process,
//     and for allocator totals (Kineto [memory]: "GPU memory (bytes)" /
//     "CPU memory (bytes)", args allocated and reserved);
//   - a "tracedx findings" process (sorted first) whose threads hold each
//     finding's evidence windows as "X" slices named "RULE#N: title" (one
//     lane per rule, more lanes
//     when a rule's windows overlap), args carrying rule, ref (RULE#N),
//     severity, title and message.
//
// Units: the model's int64 nanoseconds are written as microseconds with
// exactly three decimals ("ts":1234.567), so no precision is lost and the
// text is the same on every run. Process ids are assigned in order (rank,
// devices, then host processes); real pids appear in the process names.
//
// Output is deterministic: the same input and options give the same bytes.
package perfetto
