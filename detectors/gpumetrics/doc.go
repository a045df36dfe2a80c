// Package gpumetrics implements the gpu-metrics detector (hardware layer):
// Nsight Systems GPU-metrics samples (GPU_METRICS with the names of
// TARGET_INFO_GPU_METRICS, imported by importers/nsys as counter series per
// device) summarised per device over the steady state and judged against
// the seed's targets: SMs active > 80 %, DRAM bandwidth > 70 % in
// memory-bound phases, tensor cores active > 90 % in GEMM-bound phases;
// PCIe and NVLink throughput are reported and flagged when saturated.
//
// Place in the pipeline: detectors/all registers it; it reads
// model.Trace.Counters / Samples, Devices and step ranges only.
//
// Per step: when the trace has step ranges (ProfilerStep#N, NVTX steps),
// the steady window starts after the warm-up steps (detectors.Steady) and
// perStep reports the spread of SM activity across steps; the prefill /
// decode phases of a step model are the hook for later (see perStep).
//
// Owner: the serving, memory and hardware layers (issue 15).
package gpumetrics
