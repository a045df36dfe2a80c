// Package cudagraph implements the cuda-graph detector: CUDA/HIP graph
// launches and the kernels they replay, and decode steps that launch many
// tiny kernels eagerly where a graph would remove the launch overhead.
//
// Place in the pipeline: detectors/all registers it; it reads graph-launch
// API calls, kernel correlation and the steps of model.FindSteps.
//
// Owner: the inference step model (issue 9).
package cudagraph
