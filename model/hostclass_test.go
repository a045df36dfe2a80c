package model

import "testing"

func TestClassifyHostName(t *testing.T) {
	cases := map[string]HostClass{
		"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__": HostDataLoading,
		"torch/utils/data/_utils/collate.py(84): default_collate":     HostDataLoading,
		"MyDataset.__getitem__":                 HostDataLoading,
		"pin_memory":                            HostDataLoading,
		"nvrtcCompileProgram":                   HostJIT,
		"compileKernel":                         HostJIT,
		"cuModuleLoadDataEx":                    HostJIT,
		"torch/_dynamo/eval_frame.py(600): _fn": HostJIT,
		"TorchDynamo Cache Lookup":              HostJIT,
		"cudaFree":                              HostLazyInit,
		"cuCtxCreate_v2":                        HostLazyInit,
		"cuDevicePrimaryCtxRetain":              HostLazyInit,
		"cublasCreate_v2":                       HostLazyInit,
		"cudnnCreate":                           HostLazyInit,
		"cudaMalloc":                            HostLazyInit,
		"cuModuleGetFunction":                   HostLazyInit,
		"flashinfer/jit/cubin_loader.py(159): load_cubin": HostJIT,
		"aten::mm":              HostOther,
		"cudaLaunchKernel":      HostOther,
		"ProfilerStep#3":        HostOther,
		"cudaStreamSynchronize": HostOther,
		"warmup":                HostOther,
		"validation_step":       HostOther,
		"":                      HostOther,
	}
	for name, want := range cases {
		if got := ClassifyHostName(name); got != want {
			t.Errorf("ClassifyHostName(%q) = %s, want %s", name, got, want)
		}
	}
}
