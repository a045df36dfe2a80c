package model

import (
	"regexp"
	"strings"
)

// commKernelName recognises communication kernels by name: NCCL / RCCL /
// HCCL / MSCCL / NVSHMEM, and custom all-reduce kernels (vLLM, SGLang).
var commKernelName = regexp.MustCompile(`(?i)^(void )?(nccl|rccl|hccl|msccl|nvshmem)|nccl(Dev)?Kernel|cross_device_reduce|custom_?all_?reduce`)

// IsCommKernelName reports whether a GPU kernel name is a communication kernel.
func IsCommKernelName(name string) bool { return commKernelName.MatchString(name) }

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
