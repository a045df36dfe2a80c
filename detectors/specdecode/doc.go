// Package specdecode implements the spec-decode detector: speculative
// decoding acceptance per metrics window (vLLM V0/V1, SGLang) against what
// makes speculation pay.
//
// Place in the pipeline: detectors/all registers it; it reads
// model.Trace.JobLog (filled by importers/joblog) only.
//
// Owner: the job-log importer and its rules (issue 15).
package specdecode
