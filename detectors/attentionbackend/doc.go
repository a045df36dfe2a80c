// Package attentionbackend implements the attention-backend detector:
// which attention implementation ran (FlashAttention, FlashInfer, paged,
// SDPA memory-efficient, cuDNN, Triton, TensorRT-LLM FMHA), and eager
// attention (softmax plus batched matmuls) carrying the attention time.
//
// Place in the pipeline: detectors/all registers it; it reads kernel names
// (model.ClassifyOp, model.AttentionBackend) and, for Kineto, the CPU op
// that launched each kernel (External id).
//
// Owner: the inference step model and kernel classes (issue 9).
package attentionbackend
