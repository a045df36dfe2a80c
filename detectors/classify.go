package detectors

import (
	"regexp"

	"github.com/tracedx/tracedx/model"
)

// Class is the kind of work a GPU activity does.
type Class uint8

// Activity classes.
const (
	ClassCompute Class = iota
	ClassComm
	ClassMemory
)

func (c Class) String() string {
	switch c {
	case ClassComm:
		return "communication"
	case ClassMemory:
		return "memory"
	}
	return "computation"
}

// ClassifyKernel classifies a kernel by its name (tracedx's own definition:
// communication kernels by model.IsCommKernelName, everything else compute).
func ClassifyKernel(name string) Class {
	if model.IsCommKernelName(name) {
		return ClassComm
	}
	return ClassCompute
}

// KernelClasses classifies every kernel of t, caching by name.
func KernelClasses(t *model.Trace) []Class {
	cache := map[model.StringID]Class{}
	out := make([]Class, len(t.Kernels))
	for i := range t.Kernels {
		id := t.Kernels[i].Name
		c, ok := cache[id]
		if !ok {
			c = ClassifyKernel(t.Str(id))
			cache[id] = c
		}
		out[i] = c
	}
	return out
}

// HTA's kernel classes (Holistic Trace Analysis, by name prefix).
var (
	htaMemory = regexp.MustCompile(`^(hip)?Memcpy|^(hip)?Memset|^dma`)
	htaComm   = regexp.MustCompile(`^nccl|^hip|^hccl|.*ncclKernel`)
	htaNonCmp = regexp.MustCompile(`^nccl|.*Memcpy|.*Memset|.*dma|^.*Sync|^Stream Wait Event|cuda.*LaunchKernel|^runFunction|^hip|^job_exe|^packet|^pe_exe|^cpum_exe_subgraph|^hccl|^collective_subgraph_execution`)
)

// ClassifyHTA classifies an activity name as HTA does: memory, then
// communication, then computation when the name matches none of HTA's
// non-compute patterns. ok is false for names HTA counts in no class.
func ClassifyHTA(name string) (c Class, ok bool) {
	switch {
	case htaMemory.MatchString(name):
		return ClassMemory, true
	case htaComm.MatchString(name):
		return ClassComm, true
	case !htaNonCmp.MatchString(name):
		return ClassCompute, true
	}
	return 0, false
}
