// Package steplatency implements the step-latency detector: engine step
// time per phase (prefill / decode / mixed), outlier steps against the
// phase median, mixed steps stalling decode, host (scheduler) time between
// decode steps, and step-time imbalance across the ranks of one job.
//
// Place in the pipeline: detectors/all registers it; it reads the steps
// model.FindSteps derives from the engines' step annotations.
//
// Owner: the inference step model (issue 9).
package steplatency
