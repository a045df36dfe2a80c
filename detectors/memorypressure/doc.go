// Package memorypressure implements the memory-pressure detector for job
// and engine logs (KV cache saturation with preemptions, start-up KV
// capacity, CUDA out-of-memory errors with the allocator's numbers) and for
// traces (peak reserved vs the device, fragmentation under pressure,
// allocator churn; trace.go).
//
// Place in the pipeline: detectors/all registers it; it reads
// model.Trace.JobLog (importers/joblog), and MemEvents with Devices of
// timeline traces (Kineto [memory] events, nsys CUDA memory usage).
//
// Owner: the job-log importer and its rules (issue 15).
package memorypressure
