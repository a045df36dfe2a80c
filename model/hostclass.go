package model

import (
	"regexp"
	"strings"
)

// HostClass says what kind of host work a range or API call name stands for,
// when that kind explains a GPU idle gap by itself.
type HostClass uint8

// Host work classes.
const (
	HostOther       HostClass = iota // nothing specific
	HostDataLoading                  // DataLoader / dataset / collate / pin-memory
	HostJIT                          // run-time compilation: NVRTC, module loads, Triton/Inductor/dynamo
	HostLazyInit                     // first-call costs: context creation, handles, autotuning
)

var hostClassNames = [...]string{"other", "data-loading", "jit-compile", "lazy-init"}

func (c HostClass) String() string {
	if int(c) < len(hostClassNames) {
		return hostClassNames[c]
	}
	return "invalid"
}

// hostRule is one row of the host-name classifier; the first match wins.
type hostRule struct {
	class HostClass
	re    *regexp.Regexp
}

// hostRules match range names (CPU ops, Python frames, user annotations,
// NVTX ranges) and API call names. Data loading comes first: a collate
// function that happens to compile something is still data loading.
var hostRules = []hostRule{
	// PyTorch: enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__,
	// _MultiProcessingDataLoaderIter, torch/utils/data/*, Dataset.__getitem__,
	// default_collate, pin_memory threads; generic "dataloader"/"data_loading"
	// NVTX ranges; tf.data / DALI / grain iterators.
	{HostDataLoading, regexp.MustCompile(`(?i)dataloader|data_?loading|load_?batch|utils/data/|dataset\b|dataset[._]|__getitem__|collate|pin_?memory|prefetch_?batch|tf\.data|(^|[^a-z])dali|grain\.`)},
	// Run-time compilation: NVRTC (nvrtcCompileProgram), driver module loads
	// of JIT output (cuModuleLoadData*, cuLinkComplete; cuLibraryLoadData is
	// the runtime's lazy module loading, below),
	// Triton / Inductor / dynamo / AOT autograd compile ranges, nvFuser and
	// XLA compiles, generic compileKernel NVTX ranges.
	{HostJIT, regexp.MustCompile(`(?i)nvrtc|cumoduleloaddata|culinkcomplete|culinkadddata|compilekernel|compile_?program|compile_?fx|compile_?inner|torch_?dynamo|_dynamo|dynamo\b|inductor|aot_?autograd|triton.*compile|compile.*triton|nvfuser.*compile|fusion_?compile|jit_?compile|(^|/)jit/|cubin|xla.*compile|backend_compile|torch\.compile`)},
	// First-call costs: context creation (cudaFree(0), cuCtxCreate,
	// cuDevicePrimaryCtxRetain, cuInit), module loading (cuModuleLoad,
	// cuModuleGetFunction, cudaGetFuncBySymbol on first launch), library
	// handles (cublasCreate, cudnnCreate, cusparseCreate, cublasLt), large
	// host/device allocations, autotuning and benchmark-mode searches, CUDA
	// graph capture/instantiation.
	{HostLazyInit, regexp.MustCompile(`(?i)^cu(da)?init$|cuctxcreate|primaryctxretain|cudasetdevice|cumoduleload|cumodulegetfunction|culibraryload|culibrarygetkernel|cudagetfuncbysymbol|cudafuncgetattributes|(cublas|cublaslt|cudnn|cusparse|cusolver|cufft|curand|nccl|cutensor)(create|getversion|init|comminitrank)|autotun|benchmark_?config|find_?algo|cudnnfind|cudagraphinstantiate|cugraphinstantiate|cuda_?graph.*capture|cudamalloc|cumemalloc|cudahostalloc|cumemhostalloc|cudamallochost|cudamallocmanaged|cudafree|cumemfree|cudafreehost|cumemcreate|cumemmap`)},
}

// ClassifyHostName classifies a host range or API call name by the kind of
// work it stands for (data loading, JIT compilation, first-call
// initialisation), or HostOther.
func ClassifyHostName(name string) HostClass {
	if name == "" {
		return HostOther
	}
	n := StripAPIVersion(strings.TrimSpace(name))
	for i := range hostRules {
		if hostRules[i].re.MatchString(n) {
			return hostRules[i].class
		}
	}
	return HostOther
}
