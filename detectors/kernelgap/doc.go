// Package kernelgap implements the kernel-gap detector: GPU idle time between
// kernels on each device, every gap attributed to a cause from what the trace
// shows inside it.
//
// Place in the pipeline: detectors/all registers it; it reads the model only.
// Units: nanoseconds internally; the threshold parameter is in microseconds.
package kernelgap
