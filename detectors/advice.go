package detectors

import "strings"

// Advice that depends on what produced the trace: PyTorch idioms only for
// PyTorch, the CUDA/HIP API for native programs, and the equivalent of each
// programming model where one exists.

// LaunchBoundAdvice is the advice for a launch-bound device (kernel-gap's
// launch-bound cause, launch-overhead), worded for the producer.
func LaunchBoundAdvice(p ProducerInfo) string {
	var s []string
	switch p.Producer {
	case ProducerPyTorch:
		if p.Compiled {
			s = append(s, `the model already runs torch.compile kernels: compile with mode="reduce-overhead" (or "max-autotune") so that the step is replayed as a CUDA Graph, and remove graph breaks (torch._dynamo.explain) that leave eager launches between compiled regions`)
		} else {
			s = append(s, `capture the step in a CUDA Graph (torch.compile(mode="reduce-overhead"), or torch.cuda.graphs / make_graphed_callables)`,
				"fuse chains of small ops (torch.compile, fused optimizers such as foreach/fused=True)")
		}
		s = append(s, "raise the batch size or the work per kernel", "keep Python work, .item() and logging out of the hot loop")
	case ProducerJAX:
		s = append(s, "jit larger functions (whole training or decode steps) and loop on the device with lax.scan / fori_loop instead of dispatching from Python",
			"let XLA replay the step as CUDA Graphs (XLA command buffers, --xla_gpu_enable_command_buffer)", "raise the batch size")
	case ProducerCuPy:
		s = append(s, "fuse element-wise chains (cupy.fuse, ElementwiseKernel / RawKernel)", "capture the loop in a CUDA Graph (stream.begin_capture / end_capture)",
			"process larger arrays per call")
	case ProducerTensorRT:
		s = append(s, "run the engine through a CUDA Graph (trtexec --useCudaGraph, or capture enqueueV3 with cudaStreamBeginCapture)", "raise the batch size")
	case ProducerTriton:
		s = append(s, "fuse neighbouring Triton kernels and give each program more work (larger BLOCK sizes)", "launch the sequence as a CUDA Graph")
	case ProducerOpenACC:
		s = append(s, "merge small parallel/kernels regions into fewer, larger ones (collapse loops, fuse loops)",
			"put the regions on async queues (async(n)) with one wait at the end so launches pipeline instead of waiting", "keep data on the device (data regions) between kernels")
	case ProducerOpenMP:
		s = append(s, "merge small target regions into fewer, larger ones (combined target teams distribute parallel for, collapse)",
			"add nowait to target regions and synchronise once (taskwait) so launches pipeline", "keep data on the device (target data) between kernels")
	case ProducerJulia:
		s = append(s, "fuse broadcasts into one expression (a single @. kernel) and write larger custom kernels (@cuda)", "avoid synchronising calls (scalar indexing, Array(x)) in the loop",
			"capture the loop in a CUDA graph (CUDA.@captured)")
	default:
		s = append(s, "capture the repeated launch sequence in a CUDA Graph (cudaStreamBeginCapture, cudaGraphLaunch)", "fuse small kernels into fewer, larger ones",
			"use a persistent kernel that loops over the work items", "give each launch more work (larger batches or grids)")
	}
	return "The GPU finishes kernels faster than the host launches them: " + strings.Join(s, "; ") + "."
}

// SyncAdvice is the advice for a host that blocks in synchronising calls.
func SyncAdvice(p ProducerInfo) string {
	switch p.Producer {
	case ProducerPyTorch:
		return "Remove synchronize calls and host reads of device values (.item(), .cpu(), .tolist(), torch.cuda.synchronize()) from the steady state; use events and non_blocking copies; torch.cuda.set_sync_debug_mode(\"warn\") names the lines that synchronise."
	case ProducerJAX:
		return "Avoid host reads of device arrays (float(x), np.asarray(x), block_until_ready) inside the loop; keep the loop on the device (lax.scan) and read results once per N steps."
	case ProducerOpenACC:
		return "Put kernels and updates on async queues (async(n)) and wait once (wait(n)) where the host needs the result, instead of the implicit synchronisation after every region."
	case ProducerOpenMP:
		return "Add nowait to target regions and synchronise once (taskwait) where the host needs the result."
	case ProducerJulia:
		return "Avoid synchronising calls in the loop (scalar indexing, Array(x), CUDA.synchronize()); read results once per N iterations."
	}
	return "Remove cudaDeviceSynchronize / cudaStreamSynchronize from the steady state; order work with events (cudaEventRecord + cudaStreamWaitEvent) and synchronise once where the host needs the result."
}

// CopyAdvice is the advice for a host that blocks in synchronous copies.
func CopyAdvice(p ProducerInfo) string {
	switch p.Producer {
	case ProducerPyTorch:
		return "Copy from pinned memory with non_blocking=True (tensor.pin_memory(), DataLoader(pin_memory=True)) and overlap copies with compute on a side stream."
	case ProducerJAX:
		return "Transfer inputs ahead of use (jax.device_put on the next batch while the current step runs) and keep intermediates on the device."
	case ProducerOpenACC:
		return "Keep data on the device across kernels (data regions, present clauses) and use update ... async(n) for the copies that remain."
	case ProducerOpenMP:
		return "Keep data on the device across target regions (target data / enter data) and use target update nowait for the copies that remain."
	}
	return "Allocate host buffers pinned (cudaHostAlloc / cudaHostRegister), copy with cudaMemcpyAsync on a stream, and overlap copies with compute on another stream."
}
