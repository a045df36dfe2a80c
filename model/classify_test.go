package model

import "testing"

func TestClassifyKernel(t *testing.T) {
	for name, want := range map[string]string{
		// NCCL / RCCL / HCCL.
		"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)": "nccl",
		"ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)":              "nccl",
		"void ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)":                 "nccl",
		"rccl_main_kernel":                      "nccl",
		"hcclAllReduce":                         "nccl",
		"mscclKernel_Sum_half_Simple_false":     "msccl",
		"void mscclpp::allreduce6<__half>(...)": "msccl",
		"void nvshmemi_transfer_rma_nbi<...>":   "nvshmem",
		// DeepEP, demangled and mangled.
		"void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*, int*)":   "deepep",
		"void deep_ep::internode::combine<true, 8, 4>(int4*, ...)":               "deepep",
		"void deep_ep::internode_ll::dispatch<false, 3, 7168>(void*, ...)":       "deepep",
		"void deep_ep::intranode::notify_dispatch<8>(int const*, int*, int)":     "deepep",
		"void deep_ep::intranode::cached_notify_combine<8>(void**, int*, int)":   "deepep",
		"_ZN7deep_ep9intranode8dispatchILi8ELi768ELi8192EEEvP4int4PfPiS4_":       "deepep",
		"void vllm::cross_device_reduce_1stage<__half, 8>(vllm::RankData*, ...)": "custom-allreduce",
		"void sglang::cross_device_reduce_2stage<float, 4>(...)":                 "custom-allreduce",
		"void tensorrt_llm::kernels::oneShotAllReduceKernel<__nv_bfloat16>()":    "custom-allreduce",
		"void quickreduce::allreduce_prototype_twoshot<...>":                     "custom-allreduce",
		"custom_all_reduce_kernel":                                               "custom-allreduce",
		"void tutel::all_to_all_kernel<float>(...)":                              "alltoall",
		"alltoall_v_kernel":       "alltoall",
		"oneccl_allreduce_kernel": "oneccl",
		"ccl_kernel_allgatherv":   "oneccl",
		// Compute, including names that merely contain a communication word.
		"void at::native::vectorized_elementwise_kernel<4>":   "",
		"ampere_sgemm_32x128_nt":                              "",
		"combine_kernel":                                      "",
		"void moe::dispatch_tokens<float>(...)":               "",
		"void deep_ep::layout::get_dispatch_layout<256>(...)": "",
		"triton_red_fused_sum_0":                              "",
		"reduce_kernel<512, 1>":                               "",
	} {
		got := KernelFamily(name)
		if got != want {
			t.Errorf("KernelFamily(%q) = %q, want %q", name, got, want)
		}
		if IsCommKernelName(name) != (want != "") {
			t.Errorf("IsCommKernelName(%q) = %v", name, !(want != ""))
		}
	}
	if KernelMemory.Compute() || KernelComm.Compute() || !KernelCompute.Compute() {
		t.Error("Compute() is wrong")
	}
}

func TestIsCommRangeName(t *testing.T) {
	for name, want := range map[string]bool{
		"c10d::allreduce_":                  true,
		"nccl:all_reduce":                   true,
		"gloo:broadcast":                    true,
		"record_param_comms":                true,
		"record_param_comms_extra":          false,
		"ProcessGroupNCCL::allreduce":       true,
		"torch.distributed.all_reduce":      true,
		"aten::mm":                          false,
		"enumerate(DataLoader)#_SingleProc": false,
	} {
		if got := IsCommRangeName(name); got != want {
			t.Errorf("IsCommRangeName(%q) = %v, want %v", name, got, want)
		}
	}
}
