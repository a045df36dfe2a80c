package detectors

import (
	"regexp"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Producer is the software that put the work on the GPU: the framework or
// programming model whose advice fits a finding.
type Producer uint8

// Producers. Python is a Python program whose framework the capture does not
// name; NativeCUDA is a program that calls CUDA (or HIP) itself.
const (
	ProducerUnknown Producer = iota
	ProducerPyTorch
	ProducerJAX
	ProducerCuPy
	ProducerTensorRT
	ProducerTriton
	ProducerOpenACC
	ProducerOpenMP
	ProducerJulia
	ProducerPython
	ProducerNativeCUDA
	numProducers
)

var producerNames = [numProducers]string{"unknown", "PyTorch", "JAX/XLA", "CuPy", "TensorRT", "Triton", "OpenACC", "OpenMP offload", "Julia", "Python", "native CUDA"}

func (p Producer) String() string {
	if p < numProducers {
		return producerNames[p]
	}
	return "invalid"
}

// ProducerInfo is what DetectProducer found.
type ProducerInfo struct {
	Producer Producer
	// Compiled is set for PyTorch when torch.compile / Inductor (Triton)
	// kernels ran.
	Compiled bool
	// Why names the events that decided, for messages and tests.
	Why string
}

// Python reports whether the producer is a Python program.
func (p ProducerInfo) Python() bool {
	switch p.Producer {
	case ProducerPyTorch, ProducerJAX, ProducerCuPy, ProducerTriton, ProducerPython:
		return true
	}
	return false
}

var (
	// OpenACC kernels as NVHPC names them: <function>_<line>_gpu[__red].
	openACCKernel = regexp.MustCompile(`^\w+_\d+_gpu(__red\w*)?$`)
	// XLA fusion kernels: fusion_12, loop_add_fusion, input_reduce_fusion_3.
	xlaKernel = regexp.MustCompile(`^(\w+_)?fusion(_\d+)?$|^wrapped_\w+$`)
)

// DetectProducer tells which software produced the GPU work of t, from the
// capture alone: the format (Kineto is PyTorch's profiler), framework
// operators and NVTX ranges (aten::, XlaModule), kernel names (at::native,
// triton_, cupy_, __omp_offloading_, nvkernel_, *_NN_gpu, julia_, *_trt),
// and the names of the processes that made CUDA calls. The first signal in
// this order wins: PyTorch, JAX/XLA, CuPy, TensorRT, Triton, OpenMP offload,
// OpenACC, Julia, then Python (a python process with no framework signal)
// and native CUDA (API calls or kernels from any other process).
func DetectProducer(t *model.Trace) ProducerInfo {
	var n struct {
		aten, atKernel, triton, xlaRange, xlaKernel, cupy, trt, omp, acc, julia int
		kernels                                                                 int
	}
	if t.Format == model.FormatKineto {
		return kinetoProducer(t)
	}
	seenRange := map[model.StringID]bool{}
	for i := range t.Ranges {
		r := &t.Ranges[i]
		if seenRange[r.Name] {
			continue
		}
		seenRange[r.Name] = true
		name := t.Str(r.Name)
		switch {
		case strings.HasPrefix(name, "aten::") || strings.HasPrefix(name, "autograd::") || strings.HasPrefix(name, "torch."):
			n.aten++
		case strings.HasPrefix(name, "XlaModule") || strings.HasPrefix(name, "Xla") && strings.Contains(name, "hlo"):
			n.xlaRange++
		}
	}
	seenKernel := map[model.StringID]bool{}
	for i := range t.Kernels {
		k := &t.Kernels[i]
		if seenKernel[k.Name] {
			continue
		}
		seenKernel[k.Name] = true
		n.kernels++
		name := t.Str(k.Name)
		short := name
		if sn := t.LaunchConfig(k).ShortName; sn != model.NoString {
			short = t.Str(sn)
		}
		switch {
		case strings.Contains(name, "at::native::") || strings.Contains(name, "at::cuda::") || strings.Contains(name, "c10::"):
			n.atKernel++
		case strings.HasPrefix(short, "triton_") || strings.HasPrefix(short, "triton__"):
			n.triton++
		case strings.HasPrefix(short, "cupy_"):
			n.cupy++
		case strings.HasSuffix(short, "_trt") || strings.Contains(short, "_trt_"):
			n.trt++
		case strings.HasPrefix(short, "__omp_offloading_") || strings.HasPrefix(short, "nvkernel_"):
			n.omp++
		case openACCKernel.MatchString(short):
			n.acc++
		case strings.HasPrefix(short, "julia_") || strings.HasPrefix(name, "julia_"):
			n.julia++
		case xlaKernel.MatchString(short):
			n.xlaKernel++
		}
	}
	procs := launchingProcesses(t)
	python, julia := false, false
	for _, name := range procs {
		l := strings.ToLower(name)
		python = python || strings.Contains(l, "python")
		julia = julia || strings.Contains(l, "julia")
	}
	switch {
	case n.aten > 0 || n.atKernel > 0:
		why := "PyTorch kernels (at::native)"
		if n.aten > 0 {
			why = "aten:: operator ranges"
		}
		return ProducerInfo{Producer: ProducerPyTorch, Compiled: n.triton > 0, Why: why}
	case n.xlaRange > 0 || n.xlaKernel > 0 && 2*n.xlaKernel >= n.kernels:
		return ProducerInfo{Producer: ProducerJAX, Why: "XLA modules or fusion kernels"}
	case n.cupy > 0:
		return ProducerInfo{Producer: ProducerCuPy, Why: "cupy_ kernels"}
	case n.trt > 0:
		return ProducerInfo{Producer: ProducerTensorRT, Why: "TensorRT (_trt) kernels"}
	case n.triton > 0:
		return ProducerInfo{Producer: ProducerTriton, Why: "triton_ kernels"}
	case n.omp > 0:
		return ProducerInfo{Producer: ProducerOpenMP, Why: "OpenMP offload kernels (__omp_offloading_, nvkernel_)"}
	case n.acc > 0:
		return ProducerInfo{Producer: ProducerOpenACC, Why: "OpenACC kernels (<function>_<line>_gpu)"}
	case n.julia > 0 || julia:
		return ProducerInfo{Producer: ProducerJulia, Why: "Julia kernels or process"}
	case python:
		return ProducerInfo{Producer: ProducerPython, Why: "a python process with no framework signal"}
	case len(t.APICalls) > 0 || len(t.Kernels) > 0:
		return ProducerInfo{Producer: ProducerNativeCUDA, Why: "CUDA calls from a non-Python process"}
	}
	return ProducerInfo{Producer: ProducerUnknown}
}

// kinetoProducer: Kineto is PyTorch's profiler; torch.compile shows as
// Triton kernels or Inductor / dynamo ranges.
func kinetoProducer(t *model.Trace) ProducerInfo {
	p := ProducerInfo{Producer: ProducerPyTorch, Why: "PyTorch profiler (Kineto) trace"}
	seen := map[model.StringID]bool{}
	for i := range t.Kernels {
		id := t.Kernels[i].Name
		if seen[id] {
			continue
		}
		seen[id] = true
		if strings.HasPrefix(t.Str(id), "triton_") {
			p.Compiled = true
			return p
		}
	}
	for i := range t.Ranges {
		name := t.Str(t.Ranges[i].Name)
		if strings.HasPrefix(name, "Torch-Compiled Region") || strings.HasPrefix(name, "CompiledFunction") {
			p.Compiled = true
			return p
		}
	}
	return p
}

// launchingProcesses returns the names of the processes with CUDA API calls
// (every process of the trace when no call has a thread).
func launchingProcesses(t *model.Trace) []string {
	seen := map[model.ThreadID]bool{}
	pids := map[int64]bool{}
	for i := range t.APICalls {
		th := t.APICalls[i].Thread
		if th == model.NoThread || seen[th] {
			continue
		}
		seen[th] = true
		pids[t.Thread(th).PID] = true
	}
	var out []string
	for _, p := range t.Processes {
		if len(pids) == 0 || pids[p.PID] {
			out = append(out, p.Name)
		}
	}
	return out
}
