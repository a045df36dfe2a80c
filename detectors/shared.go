package detectors

import (
	"runtime"
	"sync"
	"unsafe"
	"weak"

	"github.com/tracedx/tracedx/model"
)

// The breakdown, the summary and several rules each need every GPU activity
// of a trace in start order, split per device. They run concurrently, and on
// a capture of millions of kernels each copy is about 100 MB: four private
// copies plus their per-device splits made most of analyze's peak memory.
// Activities and ByDevice therefore compute them once per trace and hand the
// same read-only lists to every caller. An entry lives as long as its trace
// (a weak key, removed by a cleanup when the trace is collected) and is
// recomputed when the trace's tables were replaced or resized since.

type sharedActs struct {
	once sync.Once
	acts []Activity
	// stamp is what the tables looked like when acts was computed.
	stamp tableStamp

	byOnce sync.Once
	ids    []model.DeviceID
	by     map[model.DeviceID][]Activity
}

// tableStamp identifies the kernel and memory-operation tables of a trace.
type tableStamp struct {
	kernels, memops   unsafe.Pointer
	nKernels, nMemops int
}

func stampOf(t *model.Trace) tableStamp {
	return tableStamp{unsafe.Pointer(unsafe.SliceData(t.Kernels)), unsafe.Pointer(unsafe.SliceData(t.MemOps)), len(t.Kernels), len(t.MemOps)}
}

var (
	sharedMu     sync.Mutex
	sharedByKey  = map[weak.Pointer[model.Trace]]*sharedActs{}
	sharedByActs = map[*Activity]*sharedActs{}
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
	if ok {
		forgetActs(e)
	} else {
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
	if e, ok := sharedByKey[k]; ok {
		forgetActs(e)
		delete(sharedByKey, k)
	}
}

func forgetActs(e *sharedActs) {
	if len(e.acts) > 0 && sharedByActs[&e.acts[0]] == e {
		delete(sharedByActs, &e.acts[0])
	}
}

func (e *sharedActs) activities(t *model.Trace) []Activity {
	e.once.Do(func() {
		acts := activities(t)
		sharedMu.Lock()
		e.acts = acts
		if len(acts) > 0 {
			sharedByActs[&acts[0]] = e
		}
		sharedMu.Unlock()
	})
	return e.acts
}

// sharedOf returns the entry whose shared list acts is (the same array and
// length), nil for any other list.
func sharedOf(acts []Activity) *sharedActs {
	if len(acts) == 0 {
		return nil
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	e := sharedByActs[&acts[0]]
	if e == nil || len(e.acts) != len(acts) {
		return nil
	}
	return e
}

func (e *sharedActs) byDevice(acts []Activity) ([]model.DeviceID, map[model.DeviceID][]Activity) {
	e.byOnce.Do(func() { e.ids, e.by = byDevice(acts) })
	return e.ids, e.by
}
