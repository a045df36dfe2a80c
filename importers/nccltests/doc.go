// Package nccltests imports nccl-tests and rccl-tests console logs (stdout of
// all_reduce_perf and friends, optionally with NCCL_DEBUG lines and launcher
// prefixes) into model.Trace.Bench.
//
// Pipeline place: cmd → importers (this package) → model. It fills only the
// benchmark part of the model (no timeline tables): one model.BenchRun per
// nccl-tests table, the failure lines met anywhere, and the NCCL facts
// (version, network, transports per connection, channel counts, NVLS/CollNet,
// GPUDirect RDMA, init completion, warnings) read from NCCL_DEBUG lines.
//
// Units are those nccl-tests prints: sizes in bytes, times in microseconds,
// bandwidths in GB/s (1e9 bytes/s). Nothing is converted.
//
// The reader is a line state machine with no line-length limit (very long
// lines are cut to their first MiB for parsing, with a warning). The column
// layout of every table is learned from its header line, so every header
// variant from nccl-tests 2.0 to 2.20 and rccl-tests is read the same way; see
// HACKING.md "## nccl-tests" for the quirks this handles.
package nccltests
