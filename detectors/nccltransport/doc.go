// Package nccltransport implements the nccl-transport detector: which
// transports NCCL chose, read from NCCL_DEBUG=INFO lines of nccl-tests logs
// (socket fallback where a fast network exists, no P2P between GPUs of one
// node, GPUDirect RDMA off, NVLS/CollNet unused where available).
//
// Place in the pipeline: detectors/all registers it; it reads model.Bench
// (NCCLFacts and runs, filled by importers/nccltests) only.
package nccltransport
