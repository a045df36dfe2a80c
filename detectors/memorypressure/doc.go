// Package memorypressure implements the memory-pressure detector for job
// and engine logs: KV cache saturation with preemptions, start-up KV
// capacity, and CUDA out-of-memory errors with the allocator's numbers.
//
// Place in the pipeline: detectors/all registers it; it reads
// model.Trace.JobLog (filled by importers/joblog) only. Kineto [memory]
// events and nsys CUDA memory usage are not read yet.
//
// Owner: the job-log importer and its rules (issue 15).
package memorypressure
