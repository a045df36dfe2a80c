package model

import (
	"regexp"
	"strconv"
	"strings"
)

// KernelOp is what a compute kernel does, finer than KernelClass: the
// kernel-layer rules (tensor-core, attention-backend, cuda-graph) and the
// per-class breakdowns read it. It is derived from the name alone.
type KernelOp uint8

// Kernel operations.
const (
	OpOther KernelOp = iota
	OpGEMM
	OpConv
	OpAttention
	OpMoE
	OpSoftmax
	OpNorm
	OpEmbedding // embedding lookups, sampling, top-k
	OpCopy
	OpReduction
	OpElementwise
	OpComm
)

var kernelOpNames = [...]string{"other", "gemm", "conv", "attention", "moe", "softmax", "norm", "embedding-sampling", "copy", "reduction", "elementwise", "communication"}

func (o KernelOp) String() string {
	if int(o) < len(kernelOpNames) {
		return kernelOpNames[o]
	}
	return "other"
}

// opRules are tried in order; the first match wins. Attention and MoE come
// before GEMM because their fused kernels contain "gemm"/"matmul".
var opRules = []struct {
	op KernelOp
	re *regexp.Regexp
}{
	{OpAttention, regexp.MustCompile(`(?i)flash|fmha|attention|attn|xformers|mha_fwd|mha_bwd|sdpa`)},
	{OpMoE, regexp.MustCompile(`(?i)moe|expert|_ogs_|grouped_?gemm|topk_?gating|permute_?tokens`)},
	{OpConv, regexp.MustCompile(`(?i)conv[123]d|convolve|convolution|(^|[^a-z])conv_|fprop|dgrad|wgrad|implicit_?gemm|igemm_|winograd`)},
	{OpGEMM, regexp.MustCompile(`(?i)gemm|gemv|xmma|wgmma|cutlass.*tensorop|Cijk_|nvjet|matmul|(^|_)bmm_|cublas|hipblaslt`)},
	{OpSoftmax, regexp.MustCompile(`(?i)softmax`)},
	{OpNorm, regexp.MustCompile(`(?i)norm`)},
	{OpEmbedding, regexp.MustCompile(`(?i)embedding|index_?select|sampl|top_?k|argmax|rotary|rope`)},
	{OpCopy, regexp.MustCompile(`(?i)copy|memcpy|memset|CatArray|cat_|transpose|fill_kernel`)},
	{OpReduction, regexp.MustCompile(`(?i)reduce_kernel|reduction|triton_red_|_sum_|mean_`)},
	{OpElementwise, regexp.MustCompile(`(?i)elementwise|vectorized|unrolled|triton_poi_|silu|gelu|relu|act_and_mul|activation|cast|add_kernel|mul_kernel`)},
}

// notAttention are helpers of attention backends that name them but do no
// attention: KV-cache writes, index building, quantisation.
var notAttention = regexp.MustCompile(`(?i)kv_indices|reshape_and_cache|quantize|cache_kernel`)

// ClassifyOp returns what the kernel named name does.
func ClassifyOp(name string) KernelOp {
	if ClassifyKernel(name) == KernelComm {
		return OpComm
	}
	helper := notAttention.MatchString(name)
	for _, r := range opRules {
		if r.op == OpAttention && helper {
			continue
		}
		if r.re.MatchString(name) {
			return r.op
		}
	}
	return OpOther
}

// KernelOps classifies every kernel of t by ClassifyOp, once per name; the
// result is indexed like t.Kernels.
func KernelOps(t *Trace) []KernelOp {
	cache := map[StringID]KernelOp{}
	out := make([]KernelOp, len(t.Kernels))
	for i := range t.Kernels {
		id := t.Kernels[i].Name
		op, ok := cache[id]
		if !ok {
			op = ClassifyOp(t.Str(id))
			cache[id] = op
		}
		out[i] = op
	}
	return out
}

// attentionBackends name fused attention implementations by kernel name,
// first match wins.
var attentionBackends = []struct {
	name string
	re   *regexp.Regexp
}{
	{"flashinfer", regexp.MustCompile(`(?i)flashinfer|BatchPrefillWithPagedKVCache|BatchDecodeWithPagedKVCache`)},
	{"cudnn-sdpa", regexp.MustCompile(`(?i)cudnn.*(sdpa|flash|attn)|cudnn_generated_fort_native_sdpa`)},
	{"flash-attention", regexp.MustCompile(`(?i)flash_fwd|flash_bwd|flash::|pytorch_flash|flash_attn|FlashAttn|flash_decoding|flash_fwd_splitkv`)},
	{"sdpa-mem-efficient", regexp.MustCompile(`(?i)efficient_attention|mem_eff|fmha_cutlass|cutlassF|cutlassB`)},
	{"xformers", regexp.MustCompile(`(?i)xformers`)},
	{"trtllm-fmha", regexp.MustCompile(`(?i)fmhaSm|fmha_v2|xqa|mmha|masked_multihead_attention`)},
	{"paged-attention", regexp.MustCompile(`(?i)paged_attention|pa_fwd|paged_attn`)},
	{"triton", regexp.MustCompile(`(?i)unified_attention|attn_fwd|_fwd_kernel|triton.*attn|decode_attention`)},
	{"aiter", regexp.MustCompile(`(?i)aiter|ck_tile.*fmha|fmha_fwd`)},
}

// AttentionBackend names the attention implementation of a fused attention
// kernel ("other" for an attention kernel of no known family).
func AttentionBackend(name string) string {
	for _, b := range attentionBackends {
		if b.re.MatchString(name) {
			return b.name
		}
	}
	return "other"
}

// GEMMInfo is what a GEMM kernel's name says about how it computes.
type GEMMInfo struct {
	// TensorCore: the name shows matrix instructions (mma, wgmma, xmma,
	// tensorop, MFMA tiles); SIMT: a plain FP32 sgemm. Both false: unknown.
	TensorCore, SIMT bool
	// Arch is the SM architecture the kernel was built for (75 for sm75_,
	// 80 for ampere_/cutlass_80_, 70 for volta_), 0 when the name does not say.
	Arch int
}

var (
	gemmSIMT   = regexp.MustCompile(`(?i)(^|[^a-z0-9])(volta_|turing_|ampere_|maxwell_|sm\d+_)?sgemm|gemmSN_|gemmk1_kernel`)
	gemmTC     = regexp.MustCompile(`(?i)xmma|wgmma|mma|tensorop|s1688|s16816|h1688|h16816|i8816|hmma|imma|nvjet|_MI\d+x\d+x\d+|mfma|bmm_.*(Bfloat16|E4m3|E2m1|Fp16)`)
	gemmArchSM = regexp.MustCompile(`(?i)(^|[^a-z0-9])sm_?(\d{2,3})[a-z]?_`)
	gemmArchCL = regexp.MustCompile(`cutlass_(\d{2})_`)
	gemmArchNm = regexp.MustCompile(`(?i)(^|[^a-z0-9])(maxwell|pascal|volta|turing|ampere|hopper|blackwell)_`)
)

var archNames = map[string]int{"maxwell": 52, "pascal": 60, "volta": 70, "turing": 75, "ampere": 80, "hopper": 90, "blackwell": 100}

// GEMMOf reads a GEMM or convolution kernel's name.
func GEMMOf(name string) GEMMInfo {
	var g GEMMInfo
	g.TensorCore = gemmTC.MatchString(name)
	g.SIMT = !g.TensorCore && gemmSIMT.MatchString(name)
	if m := gemmArchSM.FindStringSubmatch(name); m != nil {
		g.Arch, _ = strconv.Atoi(m[2])
	} else if m := gemmArchCL.FindStringSubmatch(name); m != nil {
		g.Arch, _ = strconv.Atoi(m[1])
	} else if m := gemmArchNm.FindStringSubmatch(name); m != nil {
		g.Arch = archNames[strings.ToLower(m[2])]
	}
	return g
}

// KernelParents returns, indexed like t.Kernels, the name of the CPU op
// that launched each kernel: the first CPU op range (in start order) with
// the kernel's external id, NoString when there is none. hasOps reports
// whether t has any CPU op with an external id at all (else parents are
// unknown, not absent). Only the external ids of kernels are indexed: a
// trace has many more CPU ops than kernels.
func KernelParents(t *Trace) (parents []StringID, hasOps bool) {
	const unset = ^StringID(0)
	first := map[int64]StringID{}
	for i := range t.Kernels {
		if id := t.Kernels[i].ExternalID; id != 0 {
			first[id] = unset
		}
	}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if r.Kind != RangeCPUOp || r.ExternalID == 0 {
			continue
		}
		hasOps = true
		if v, ok := first[r.ExternalID]; ok && v == unset {
			first[r.ExternalID] = r.Name
		}
	}
	parents = make([]StringID, len(t.Kernels))
	for i := range t.Kernels {
		p, ok := first[t.Kernels[i].ExternalID]
		if !ok || p == unset {
			p = NoString
		}
		parents[i] = p
	}
	return parents, hasOps
}
