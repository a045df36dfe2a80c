// Package ncclerrors implements the nccl-errors detector: data corruption
// (#wrong > 0, out-of-bounds failures), test failures (Test NCCL/CUDA
// failure, timeouts, launcher aborts), NCCL WARN lines, hangs and truncated
// runs, and independent single-rank runs where one multi-rank run was meant.
//
// Place in the pipeline: detectors/all registers it; it reads model.Bench
// (filled by importers/nccltests) only.
package ncclerrors
