// Package roofline implements the roofline detector: achieved TFLOP/s of
// GEMM operators computed from the input shapes Kineto records
// (record_shapes=True), against what the device can attain for that shape
// (the lower of its peak for the dtype and arithmetic intensity × memory
// bandwidth), with the time lost below a realistic fraction of it.
//
// Place in the pipeline: detectors/all registers it; it reads
// model.Trace.OpShapes (filled by importers/kineto), kernel External ids
// and the device name; peaks.go holds the GPU table with its sources.
//
// Owner: the inference step model and kernel classes (issue 9).
package roofline
