package breakdown

import (
	"regexp"

	"github.com/tracedx/tracedx/model"
)

// HTA's kernel classes (Holistic Trace Analysis, by name prefix). They are
// HTA's definition, reproduced only for the hta breakdown window; tracedx's
// own classification is model.ClassifyKernel.
var (
	htaMemory = regexp.MustCompile(`^(hip)?Memcpy|^(hip)?Memset|^dma`)
	htaComm   = regexp.MustCompile(`^nccl|^hip|^hccl|.*ncclKernel`)
	htaNonCmp = regexp.MustCompile(`^nccl|.*Memcpy|.*Memset|.*dma|^.*Sync|^Stream Wait Event|cuda.*LaunchKernel|^runFunction|^hip|^job_exe|^packet|^pe_exe|^cpum_exe_subgraph|^hccl|^collective_subgraph_execution`)
)

// classifyHTA classifies an activity name as HTA does: memory, then
// communication, then computation when the name matches none of HTA's
// non-compute patterns. ok is false for names HTA counts in no class.
func classifyHTA(name string) (c model.KernelClass, ok bool) {
	switch {
	case htaMemory.MatchString(name):
		return model.KernelMemory, true
	case htaComm.MatchString(name):
		return model.KernelComm, true
	case !htaNonCmp.MatchString(name):
		return model.KernelCompute, true
	}
	return 0, false
}
