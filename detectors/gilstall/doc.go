// Package gilstall is the gil-stall detector: Python threads waiting for the
// global interpreter lock while their process's GPUs sit idle.
//
// Pipeline place: cmd → detectors/all → gilstall → model. It reads GIL
// intervals, OS runtime calls with their call chains, Python frames, CPU ops,
// API calls, kernels and memory operations of the common model, so it works
// on Nsight Systems and Kineto imports alike. Times are int64 ns.
package gilstall

const doc = `Finds Python threads that wait for the GIL (the global interpreter lock)
while the GPUs of their process have nothing to run. A thread that launches
kernels cannot launch while it waits for the interpreter; a data-loading,
logging or metrics thread that holds it long enough starves the GPU.

## How it decides

The rule uses the strongest source the capture has, and says which in the
finding's confidence:

1. **GIL trace** (confidence *measured*): explicit intervals in which a
   thread waited for the GIL (Nsight Systems --trace=python-gil).
2. **OS runtime waits** (*inferred*): on threads recognisable as Python (by
   process or thread name such as python3 or pt_main_thread, by Python
   frames, or by call chains through the interpreter), CPython's take_gil
   waits on a condition variable with a timeout of the switch interval
   (sys.getswitchinterval(), 5 ms), asks the holder to drop the GIL, and
   waits again. An episode of back-to-back pthread_cond_timedwait /
   pthread_cond_clockwait / futex waits (gaps up to osrt_max_gap_us) is a GIL
   stall when at least osrt_min_timeouts of its waits last the switch
   interval (± switch_tol_pct), or when any of its call chains passes through
   take_gil / PyEval_RestoreThread. A wait whose resolved call chain does not
   reach the interpreter's GIL code is some other wait and is ignored.
3. **Python stacks** (*inferred*; Kineto with_stack=True): in a process with
   Python frames on two or more threads, a thread "runs" during its innermost
   Python frames, CPU ops and API calls. When the running time of the
   launching thread (the one issuing the most kernel launches) overlaps the
   other threads' by at most python_overlap_max_pct (the GIL serialises them),
   each silence of the launching thread longer than python_min_gap_us during
   which another thread runs Python is a stall. When the threads do overlap,
   the rule says it cannot tell.

A process's GPU idle time is the span from its first to its last kernel or
copy minus the union of its kernels and copies (on all of its GPUs; processes
are told apart by the correlation scope in Nsight Systems captures, and a
Kineto trace is one process). The finding reports the stall time per thread,
the part of it that overlaps GPU idle time and that part's share of the GPU
span: a warning at warn_pct, info at info_pct, quiet below. Stalls while the
GPU is busy cost nothing and do not count. The evidence lists the stalls that
overlap the most GPU idle time.

Without any of the three sources the rule is not measurable: re-capture with
nsys --trace=cuda,osrt,python-gil (or --python-backtrace=cuda), or
torch.profiler with with_stack=True.

GPU idle here means idle with an empty launch queue (launched-not-started
work counts as queued) and before the workload's end (last step, else last
GPU activity): a GIL wait while queued work runs, or in teardown, costs
nothing. gpu_idle_ns on the finding and on each evidence item.

## How to fix

- Move data loading and preprocessing out of threads into processes
  (DataLoader num_workers > 0, persistent_workers=True); keep the thread that
  launches kernels free of competition for the interpreter.
- Cut per-step Python work on other threads: logging, metric aggregation,
  progress bars, watchdogs that poll in Python; batch them or run them every
  N steps.
- Make the launching thread need the interpreter less: fewer, larger
  operations, torch.compile, and CUDA Graphs (mode="reduce-overhead") so that
  a whole step is one launch.
- Lower contention directly with sys.setswitchinterval when a background
  thread must stay, or release the GIL in C extensions around long work.
- Free-threaded CPython (3.13t+) removes the GIL for code that supports it.
`
