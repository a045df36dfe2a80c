// Package servingthroughput implements the serving-throughput detector:
// an inference engine's throughput and request queue over time, from the
// periodic stats lines of vLLM, SGLang and TensorRT-LLM logs, with a serving
// summary finding for every engine.
//
// Place in the pipeline: detectors/all registers it; it reads
// model.Trace.JobLog (filled by importers/joblog) only.
//
// Owner: the job-log importer and its rules (issue 15).
package servingthroughput
