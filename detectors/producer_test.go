package detectors_test

import (
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/internal/fixture"
	"github.com/tracedx/tracedx/model"
)

func TestDetectProducer(t *testing.T) {
	for _, c := range []struct {
		name     string
		format   model.Format
		process  string
		kernels  []string
		ranges   []string
		want     detectors.Producer
		compiled bool
	}{
		{"kineto", model.FormatKineto, "python3", []string{"void at::native::elementwise_kernel<128>"}, nil, detectors.ProducerPyTorch, false},
		{"kineto-inductor", model.FormatKineto, "python3", []string{"triton_poi_fused_add_0"}, nil, detectors.ProducerPyTorch, true},
		{"nsys-emit-nvtx", model.FormatNsys, "python3", []string{"volta_sgemm_128x64_nn"}, []string{"aten::addmm"}, detectors.ProducerPyTorch, false},
		{"nsys-aten-kernels", model.FormatNsys, "python3", []string{"void at::native::vectorized_elementwise_kernel<4>"}, nil, detectors.ProducerPyTorch, false},
		{"jax", model.FormatNsys, "python3", []string{"loop_add_fusion", "input_reduce_fusion_3", "sm90_xmma_gemm"}, nil, detectors.ProducerJAX, false},
		{"cupy", model.FormatNsys, "python3", []string{"cupy_copy__float64_float64"}, nil, detectors.ProducerCuPy, false},
		{"tensorrt", model.FormatNsys, "python", []string{"sm80_xmma_fprop_implicit_gemm_execute_kernel_trt"}, nil, detectors.ProducerTensorRT, false},
		{"triton", model.FormatNsys, "python3", []string{"triton_matmul_kernel"}, nil, detectors.ProducerTriton, false},
		{"openmp-llvm", model.FormatNsys, "./beast", []string{"__omp_offloading_31_18a80bc__Z_1"}, nil, detectors.ProducerOpenMP, false},
		{"openmp-nvhpc", model.FormatNsys, "./heat", []string{"nvkernel_solve_F1L204_2"}, nil, detectors.ProducerOpenMP, false},
		{"openacc", model.FormatNsys, "./temp4", []string{"main_41_gpu", "main_46_gpu__red"}, nil, detectors.ProducerOpenACC, false},
		{"julia", model.FormatNsys, "julia", []string{"_Z3addPf"}, nil, detectors.ProducerJulia, false},
		{"python", model.FormatNsys, "python3", []string{"my_kernel"}, nil, detectors.ProducerPython, false},
		{"native", model.FormatNsys, "./a.out", []string{"vectorAdd"}, nil, detectors.ProducerNativeCUDA, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := fixture.New("x", c.format)
			b.T.Processes[0].Name = c.process
			th := b.Thread(1, "main")
			for i, k := range c.kernels {
				b.Kernel(0, 7, k, float64(i*10+5), float64(i*10+8), th, float64(i*10))
			}
			for _, r := range c.ranges {
				b.Range(th, model.RangeNVTX, r, 0, 100)
			}
			got := detectors.DetectProducer(b.Build())
			if got.Producer != c.want || got.Compiled != c.compiled || got.Why == "" {
				t.Errorf("got %+v, want %v (compiled %v)", got, c.want, c.compiled)
			}
		})
	}
}
