package detectors

import (
	"runtime"
	"sync"
	"unsafe"
	"weak"

	"github.com/tracedx/tracedx/model"
)

// The breakdown, the summary and several rules each need every GPU activity
// of a trace in start order, split per device, and three rules need the
// stretches in which the GPU starved. They run concurrently, and on a
// capture of millions of kernels each copy is about 100 MB: private copies
// made most of analyze's peak memory. DeviceActivities, NewIdleIndex and
// KernelClasses therefore compute them once per trace and hand the same
// read-only values to every caller. An entry lives as long as its trace (a weak key, removed
// by a cleanup when the trace is collected) and is recomputed when the
// trace's tables were replaced or resized since.

type sharedActs struct {
	once sync.Once
	ids  []model.DeviceID
	by   map[model.DeviceID]ActList
	// stamp is what the tables looked like when the entry was made.
	stamp tableStamp

	idleOnce sync.Once
	idle     *IdleIndex

	classOnce sync.Once
	classes   []model.KernelClass
}

// tableStamp identifies the tables of a trace that the entry is made of.
type tableStamp struct {
	kernels, memops, calls    unsafe.Pointer
	nKernels, nMemops, nCalls int
}

func stampOf(t *model.Trace) tableStamp {
	return tableStamp{unsafe.Pointer(unsafe.SliceData(t.Kernels)), unsafe.Pointer(unsafe.SliceData(t.MemOps)),
		unsafe.Pointer(unsafe.SliceData(t.APICalls)), len(t.Kernels), len(t.MemOps), len(t.APICalls)}
}

var (
	sharedMu    sync.Mutex
	sharedByKey = map[weak.Pointer[model.Trace]]*sharedActs{}
)

// sharedFor returns the entry of t, made (or remade, when t's tables
// changed) on first use.
func sharedFor(t *model.Trace) *sharedActs {
	k := weak.Make(t)
	st := stampOf(t)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	e, ok := sharedByKey[k]
	if ok && e.stamp == st {
		return e
	}
	if !ok {
		runtime.AddCleanup(t, forget, k)
	}
	e = &sharedActs{stamp: st}
	sharedByKey[k] = e
	return e
}

// forget drops the entry of a collected trace.
func forget(k weak.Pointer[model.Trace]) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	delete(sharedByKey, k)
}
