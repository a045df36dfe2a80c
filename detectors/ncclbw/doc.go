// Package ncclbw implements the nccl-bandwidth detector: nccl-tests busbw
// (peak and plateau per collective) against what the fabric should give,
// dips at large sizes, in-place vs out-of-place gaps and small-message
// latency.
//
// Place in the pipeline: detectors/all registers it; it reads model.Bench
// (filled by importers/nccltests) only. Units are those of nccl-tests: bytes,
// microseconds, GB/s. The reference link table (fabric.go) is data: a policy
// can replace it with SetTable or override the expected rate with the
// expected_gbps parameter.
//
// Owner: the nccl-tests importer and detectors (issue 4).
package ncclbw
