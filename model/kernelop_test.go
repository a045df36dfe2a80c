package model

import "testing"

func TestClassifyOp(t *testing.T) {
	cases := map[string]KernelOp{
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas": OpGEMM,
		"ampere_sgemm_128x64_nn": OpGEMM,
		"volta_sgemm_128x64_nt":  OpGEMM,
		"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN_LDSB1":                                                      OpGEMM,
		"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT":                                                                                     OpGEMM,
		"void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t>>": OpAttention,
		"void paged_attention_ll4mi_QKV_mfma16_kernel<0, __hip_bfloat16>":                                                                  OpAttention,
		"kernel_unified_attention_3d":                                                                              OpAttention,
		"_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1_swiglu":                                                      OpMoE,
		"void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>":                  OpSoftmax,
		"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>":               OpNorm,
		"void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>": OpConv,
		"triton_poi_fused__to_copy_1":                                                                              OpCopy,
		"triton_red_fused_add_mean_mul_pow_rsqrt_0":                                                                OpReduction,
		"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>":                        OpElementwise,
		"ncclDevKernel_AllReduce_Sum_bf16_RING_LL":                                                                 OpComm,
		"mystery":                             OpOther,
		"create_flashinfer_kv_indices_triton": OpOther,
		"void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char>": OpOther,
	}
	for n, want := range cases {
		if got := ClassifyOp(n); got != want {
			t.Errorf("%s: %s, want %s", n, got, want)
		}
	}
}

func TestAttentionBackend(t *testing.T) {
	cases := map[string]string{
		"void pytorch_flash::flash_fwd_kernel<...>":               "flash-attention",
		"void paged_attention_ll4mi_QKV_mfma16_kernel<0>":         "paged-attention",
		"BatchDecodeWithPagedKVCacheKernel<...>":                  "flashinfer",
		"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16":    "trtllm-fmha",
		"fmha_cutlassF_f16_aligned_64x64_rf_sm80":                 "sdpa-mem-efficient",
		"kernel_unified_attention_3d":                             "triton",
		"attn_fwd":                                                "triton",
		"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma": "cudnn-sdpa",
	}
	for n, want := range cases {
		if got := AttentionBackend(n); got != want {
			t.Errorf("%s: %s, want %s", n, got, want)
		}
	}
}

func TestGEMMOf(t *testing.T) {
	cases := map[string]GEMMInfo{
		"volta_sgemm_128x64_nt":  {SIMT: true, Arch: 70},
		"ampere_sgemm_128x64_nn": {SIMT: true, Arch: 80},
		"sm75_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize64x64x64_stage1_warpsize2x2x1_tensor16x8x8_kernel": {TensorCore: true, Arch: 75},
		"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64":                                     {TensorCore: true, Arch: 90},
		"void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>":       {TensorCore: true, Arch: 80},
		"ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn":                                     {TensorCore: true, Arch: 80},
		"Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x32x64_MI16x16x1_SN":                           {TensorCore: true},
		"gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false>":                   {},
	}
	for n, want := range cases {
		if got := GEMMOf(n); got != want {
			t.Errorf("%s: %+v, want %+v", n, got, want)
		}
	}
}

func TestKernelOpsIndexedLikeKernels(t *testing.T) {
	tr := NewTrace("k.json", FormatKineto)
	for _, n := range []string{"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "flash_fwd_kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL"} {
		tr.Kernels = append(tr.Kernels, Kernel{Name: tr.Intern(n)})
	}
	got := KernelOps(tr)
	want := []KernelOp{OpGEMM, OpAttention, OpGEMM, OpComm}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("kernel %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestKernelParents(t *testing.T) {
	tr := &Trace{}
	op, op2, other := tr.Intern("aten::mm"), tr.Intern("aten::bmm"), tr.Intern("outer")
	tr.Ranges = []Range{
		{Start: 1, End: 9, ExternalID: 7, Name: op, Kind: RangeCPUOp},
		{Start: 2, End: 8, ExternalID: 7, Name: op2, Kind: RangeCPUOp},  // same id: the first wins
		{Start: 3, End: 4, ExternalID: 8, Name: other, Kind: RangeUser}, // not a CPU op
		{Start: 5, End: 6, ExternalID: 99, Name: op2, Kind: RangeCPUOp}, // no kernel of its own
	}
	tr.Kernels = []Kernel{{ExternalID: 7}, {ExternalID: 8}, {}, {ExternalID: 7}}
	got, has := KernelParents(tr)
	want := []StringID{op, NoString, NoString, op}
	if !has || len(got) != len(want) {
		t.Fatalf("parents %v, has %v", got, has)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("kernel %d: parent %q, want %q", i, tr.Str(got[i]), tr.Str(want[i]))
		}
	}
	tr.Ranges = tr.Ranges[2:3]
	if _, has := KernelParents(tr); has {
		t.Error("a trace without CPU ops has parents")
	}
}
