// Package tensorcore implements the tensor-core detector: GEMM and
// convolution time on SIMT FP32 kernels (sgemm) instead of tensor cores,
// and GEMMs built for an architecture two or more generations older than
// the device.
//
// Place in the pipeline: detectors/all registers it; it reads kernel names
// (model.ClassifyOp, model.GEMMOf) and the device's compute capability.
//
// Owner: the inference step model and kernel classes (issue 9).
package tensorcore
