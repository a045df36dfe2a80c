package model

import (
	"regexp"
	"strings"
)

// KernelClass is the kind of work a GPU activity does, as tracedx defines it
// for breakdowns and gap attribution. Every importer and detector classifies
// names through ClassifyKernel (and IsCommRangeName for host ranges), so a
// kernel counts as communication in the breakdown exactly when comm-wait and
// kernel-gap treat it as communication.
type KernelClass uint8

// Kernel classes. KernelCompute is every kernel no rule of kernelRules
// claims. Finer compute classes (GEMM, attention, ...) are added as new
// constants with rows in kernelRules; Compute stays true for them.
const (
	KernelCompute KernelClass = iota
	KernelComm
	KernelMemory
)

var kernelClassNames = [...]string{"computation", "communication", "memory"}

func (c KernelClass) String() string {
	if int(c) < len(kernelClassNames) {
		return kernelClassNames[c]
	}
	return "computation"
}

// Compute reports whether c is a computation class (neither communication
// nor memory traffic).
func (c KernelClass) Compute() bool { return c != KernelComm && c != KernelMemory }

// kernelRule is one row of the name classifier: a kernel whose name matches
// re belongs to class; family names the software that emits it (for
// documentation and tests).
type kernelRule struct {
	class  KernelClass
	family string
	re     *regexp.Regexp
}

// kernelRules are tried in order; the first match wins. Patterns are
// anchored on library namespaces or prefixes rather than on bare words, so
// that a compute kernel that happens to be called "combine" or "dispatch"
// stays compute.
var kernelRules = []kernelRule{
	// NCCL and its forks: ncclKernel_*, ncclDevKernel_*, RCCL, HCCL (Ascend).
	{KernelComm, "nccl", regexp.MustCompile(`(?i)^(void )?(nccl|rccl|hccl)|nccl(Dev)?Kernel`)},
	// MSCCL (msccl*) and MSCCL++ (mscclpp::*).
	{KernelComm, "msccl", regexp.MustCompile(`(?i)msccl`)},
	// NVSHMEM device-initiated communication (nvshmem*, nvshmemi_*).
	{KernelComm, "nvshmem", regexp.MustCompile(`(?i)nvshmem`)},
	// DeepEP expert-parallel all-to-all: dispatch, combine and their notify
	// kernels in deep_ep::intranode / internode / internode_ll, demangled
	// (deep_ep::intranode::dispatch<...>) or mangled (7deep_ep9intranode8dispatch).
	{KernelComm, "deepep", regexp.MustCompile(`deep_ep(::|\d+)(intranode|internode|internode_ll)(::|\d+)\w*(dispatch|combine|notify)`)},
	// Custom all-reduce of inference engines: vLLM / SGLang
	// cross_device_reduce_{1,2}stage and custom_all_reduce, quick-reduce
	// (quickreduce::allreduce_*), TensorRT-LLM one/two-shot all-reduce,
	// PyTorch symmetric-memory multimem_all_reduce / all_gather (NVLS).
	{KernelComm, "custom-allreduce", regexp.MustCompile(`(?i)cross_device_reduce|custom_?all_?reduce|quick_?reduce|(one|two)_?shot_?all_?reduce|multimem_(all_?reduce|all_?gather|reduce_scatter)`)},
	// Stand-alone all-to-all kernels (MoE token exchange, Megatron, Tutel).
	{KernelComm, "alltoall", regexp.MustCompile(`(?i)all_?to_?all`)},
	// oneCCL (Intel GPUs): ccl::*, oneccl*, ccl_kernel_*.
	{KernelComm, "oneccl", regexp.MustCompile(`(?i)(^|[^a-z])(oneccl|ccl::|ccl_kernel)`)},
}

// ClassifyKernel classifies a GPU kernel by its name. Memory operations
// (memcpy, memset records) are KernelMemory by their table, not by name.
func ClassifyKernel(name string) KernelClass {
	for i := range kernelRules {
		if kernelRules[i].re.MatchString(name) {
			return kernelRules[i].class
		}
	}
	return KernelCompute
}

// KernelFamily returns the family of the rule that classifies name ("" for
// unclassified compute kernels).
func KernelFamily(name string) string {
	for i := range kernelRules {
		if kernelRules[i].re.MatchString(name) {
			return kernelRules[i].family
		}
	}
	return ""
}

// IsCommKernelName reports whether a GPU kernel name is a communication kernel.
func IsCommKernelName(name string) bool { return ClassifyKernel(name) == KernelComm }

// commRangePrefixes start the names of host-side ranges (CPU ops, NVTX,
// user annotations) inside which a thread waits in a collective.
var commRangePrefixes = []string{"c10d::", "nccl:", "gloo:", "rccl:", "ProcessGroupNCCL", "torch.distributed", "record_param_comms", "MPI_"}

// IsCommRangeName reports whether a host range name is a collective call:
// c10d::allreduce_, nccl:all_reduce, gloo:*, rccl:*, record_param_comms,
// ProcessGroupNCCL::*, torch.distributed.*, and MPI calls (MPI_Recv,
// MPI_Allreduce, ... as nsys --trace=mpi records them).
func IsCommRangeName(name string) bool {
	for _, p := range commRangePrefixes {
		if strings.HasPrefix(name, p) {
			return p != "record_param_comms" || name == p
		}
	}
	return false
}

// CollOpFromName derives the collective operation from a kernel or operator
// name such as ncclKernel_AllReduce_RING_LL_Sum_float,
// ncclDevKernel_AllGather_RING_LL, c10d::allreduce_, nccl:all_reduce or
// "allreduce". Unknown names give CollUnknown.
func CollOpFromName(name string) CollOp {
	n := strings.ToLower(name)
	n = strings.ReplaceAll(n, "_", "")
	switch {
	case strings.Contains(n, "allreduce"):
		return CollAllReduce
	case strings.Contains(n, "reducescatter"):
		return CollReduceScatter
	case strings.Contains(n, "allgather"):
		return CollAllGather
	case strings.Contains(n, "alltoall"):
		return CollAllToAll
	case strings.Contains(n, "sendrecv"):
		return CollSendRecv
	case strings.Contains(n, "broadcast"):
		return CollBroadcast
	case strings.Contains(n, "barrier"):
		return CollBarrier
	case strings.Contains(n, "scatter"):
		return CollScatter
	case strings.Contains(n, "gather"):
		return CollGather
	case strings.Contains(n, "reduce"):
		return CollReduce
	case strings.Contains(n, "send"):
		return CollSend
	case strings.Contains(n, "recv"):
		return CollRecv
	}
	return CollUnknown
}
