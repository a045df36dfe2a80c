package kernelgap

import (
	"fmt"
	"strings"
)

// Cause is why the GPU sat idle in a gap.
type Cause uint8

// Gap causes. The order is the precedence: a gap gets the first cause whose
// evidence holds (see causeTable for each test and why it sits where it does).
const (
	CauseNotMeasurable Cause = iota
	CauseUVM
	CauseComm
	CauseDependency
	CauseSync
	CauseMemcpy
	CauseGIL
	CauseJIT
	CauseLazyInit
	CauseDataLoading
	CauseLaunch
	CauseHostCompute
	CauseOutside
	CauseUnknown
	numCauses
)

// causeInfo documents one cause: its vocabulary word, the evidence that
// gives it, why it sits at its place in the precedence, and the advice.
type causeInfo struct {
	name string
	test string
	why  string
}

// causeTable is the one place the vocabulary and its precedence live; the
// rule's documentation (tracedx rules explain kernel-gap) is built from it.
var causeTable = [numCauses]causeInfo{
	CauseNotMeasurable: {"not-measurable",
		"the capture has no host-side API calls (a GPU-only capture)",
		"without host data every other test is a guess; the gaps are still measured"},
	CauseUVM: {"uvm-migration",
		"unified-memory migrations (page faults, prefetches, evictions) on the device cover at least half of the gap",
		"a kernel stalled on page faults leaves the device idle whatever the host does, and migrations are not kernels"},
	CauseComm: {"comm-wait",
		"a host thread of the process was inside a collective (c10d::*, nccl:*, gloo:*, record_param_comms, MPI_*) for at least half of the gap",
		"waiting for peers explains both a late launch and a blocked host; the straggler is on another rank"},
	CauseDependency: {"dependency-wait",
		"the launch call of the next GPU activity had returned before the first half of the gap was over: the work was queued but did not start (it waited for another stream or event, e.g. after cudaStreamWaitEvent, a collective or a graph dependency)",
		"once the next work is queued the host is not what the GPU waits for, so copies or syncs the host runs meanwhile are not the cause"},
	CauseSync: {"sync-blocked",
		"the launching thread sat in a synchronize call (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize, hip*Synchronize) for at least half of the gap, or such a call was waiting when the gap opened, returned inside it, and the host then launched without pause (what would otherwise be launch-bound); when the host goes quiet for 1 ms after the sync returns, the gap is host-compute instead (the sync cost only its own wait)",
		"a sync drains the queue, so the host's next launch latency is exposed as idle GPU time"},
	CauseMemcpy: {"memcpy-blocked",
		"the launching thread sat in a blocking memory copy or memset call for at least half of the gap",
		"a synchronous (often pageable) copy keeps the host from launching while the device has nothing queued"},
	CauseGIL: {"gil",
		"the launching thread waited for the Python GIL for at least half of the gap (only when the capture has GIL intervals)",
		"a thread that cannot run Python cannot launch, whatever code it would have run"},
	CauseJIT: {"jit-compile",
		"ranges or calls of run-time compilation (NVRTC, cuModuleLoadData*, Triton / Inductor / dynamo / nvFuser / XLA compiles, compileKernel ranges) on the launching thread cover at least half of the gap",
		"compilation is a one-off (or a recompilation bug), not the steady-state launch cost it would otherwise be mistaken for"},
	CauseLazyInit: {"lazy-init",
		"first-call costs cover at least half of the gap on the launching thread: context creation (cudaFree(0), cuCtxCreate, cuInit), module loading (cuModuleLoad*, cuModuleGetFunction, a launch call longer than 1 ms: lazy loading on first launch), cudaMalloc/cudaHostAlloc/cudaFree, cuBLAS/cuDNN handle creation, autotuning, graph instantiation",
		"these happen once per process or shape; calling them launch overhead would send the reader to CUDA Graphs for a warm-up cost"},
	CauseDataLoading: {"data-loading",
		"DataLoader / dataset / collate / pin-memory ranges (and their worker waits) on the launching thread cover at least half of the gap",
		"the input pipeline is a separate fix (workers, prefetching, pinned memory) from launch overhead"},
	CauseLaunch: {"launch-bound",
		"the next launch came inside the gap and the host kept making CUDA calls throughout (never quiet for 1 ms): it was busy launching and dispatching ops but too slowly",
		"what is left once every specific host cause is ruled out while the host was demonstrably submitting work"},
	CauseHostCompute: {"host-compute",
		"the launching thread made no CUDA call for at least 1 ms of the gap (it was in a CPU op, Python code or other host work that launched nothing)",
		"the host was busy with something else than launching; the covering op or range is named in the evidence"},
	CauseOutside: {"outside-workload",
		"the process made no CUDA call for at least outside_min_ms and no range of the traced program covers that stretch: host-only work or waiting the capture cannot see, a pause between runs",
		"the capture cannot explain it, so it is reported rather than guessed, and it does not count in the idle share that sets severity"},
	CauseUnknown: {"unknown",
		"none of the above (for example the next activity has no launch link and the host was quiet)",
		"last: nothing in the capture supports a cause"},
}

func (c Cause) String() string {
	if c < numCauses {
		return causeTable[c].name
	}
	return "invalid"
}

// Causes lists every cause in precedence (and report) order.
func Causes() []Cause {
	out := make([]Cause, numCauses)
	for i := range out {
		out[i] = Cause(i)
	}
	return out
}

// ParseCause returns the cause named s.
func ParseCause(s string) (Cause, bool) {
	for c := range Cause(numCauses) {
		if causeTable[c].name == s {
			return c, true
		}
	}
	return 0, false
}

// causesDoc renders the vocabulary and precedence for the rule's doc.
func causesDoc() string {
	var b strings.Builder
	b.WriteString("Causes, in precedence order (a gap gets the first one whose evidence holds):\n\n")
	for i, ci := range causeTable {
		fmt.Fprintf(&b, "%d. %s: %s. Why here: %s.\n", i+1, ci.name, ci.test, ci.why)
	}
	return b.String()
}
