// Package joblog imports text logs of distributed jobs and inference servers
// into model.Trace.JobLog: NCCL_DEBUG lines (per host), PyTorch c10d /
// ProcessGroupNCCL watchdog messages, vLLM V0 and V1 stats, preemption,
// start-up capacity and speculative-decoding lines, SGLang prefill/decode
// batch lines, TensorRT-LLM iteration-stats JSON and CUDA out-of-memory
// errors, and text-generation-inference (TGI) router request lines.
//
// Pipeline place: cmd → importers (this package) → model. It fills no
// timeline tables; detectors collective-timeout, serving-throughput,
// memory-pressure and spec-decode read Trace.JobLog.
//
// One reader serves every grammar: a physical line loses its launcher and
// logger decorations first (ANSI colours, Docker/Kubernetes RFC 3339
// timestamps, kubectl "[pod/name/container]", torchrun "[rank0]:" /
// "[default0]:", Slurm "0: ", Open MPI
// "[1,0]<stdout>:", Ray / vLLM "(EngineCore_DP0 pid=…)" and Ray's bare
// "(pid=…, ip=…)", TensorRT-LLM "[12/18/2024-03:35:37] [TRT-LLM] [MPI_Rank 1]
// [I]" and "[TensorRT-LLM][INFO]", Python logging and
// vLLM "INFO 07-28 06:42:09 [loggers.py:118]", glog "[E321 02:07:08.40 f.cpp:1]",
// SGLang "[2025-09-03 18:33:18 TP0]"), keeping the outermost timestamp and
// the rank / engine instance they name; then the message is matched against
// the grammars. A known line that ends early (a terminal or a paste that
// hard-wrapped it) is joined with the undecorated lines that follow it.
// Unknown lines are ignored; known lines that do not parse become warnings
// with their line number.
//
// Times: yearless timestamps (vLLM "MM-DD", glog "MMDD", SGLang "HH:MM:SS")
// are placed in the year 2000 (a leap year, so 02-29 parses); only
// differences between times of one log are meaningful. Throughputs are
// tokens/s, usages fractions (0..1), sizes bytes.
//
// Memory is bounded for any input size: lines are streamed (no length
// limit; the first MiB of a line is parsed), stats series are decimated by
// two whenever they reach their cap, and lists of events, warnings and NCCL
// facts are capped.
//
// Owner: the job-log importer (issues 10 and 15).
package joblog
