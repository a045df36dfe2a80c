// Package collectivetimeout implements the collective-timeout detector: hung
// collectives from PyTorch c10d watchdog messages (where, start-up or
// mid-run, which ranks never arrived, arrival skew), NCCL error strings, and
// NCCL transport problems visible in a job log's NCCL_DEBUG lines per host.
//
// Place in the pipeline: detectors/all registers it; it reads
// model.Trace.JobLog (filled by importers/joblog) only.
//
// Owner: the job-log importer and its rules (issues 10 and 15).
package collectivetimeout
