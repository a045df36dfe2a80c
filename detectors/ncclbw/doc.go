// Package ncclbw implements the nccl-bandwidth detector: nccl-tests busbw
// (peak and plateau per collective) against what the fabric should give,
// dips at large sizes, in-place vs out-of-place gaps and small-message
// latency.
//
// Place in the pipeline: detectors/all registers it; it reads model.Bench
// (filled by importers/nccltests) only. Units are those of nccl-tests: bytes,
// microseconds, GB/s. The reference link table (fabric.go) is immutable
// data; the expected_gbps parameter overrides the rate it gives.
package ncclbw
