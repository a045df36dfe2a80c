package breakdown

import (
	"testing"

	"github.com/tracedx/tracedx/model"
)

func TestClassifyHTA(t *testing.T) {
	for name, want := range map[string]model.KernelClass{
		"Memcpy HtoD (Pageable -> Device)": model.KernelMemory,
		"Memset (Device)":                  model.KernelMemory,
		"ncclKernel_Broadcast_RING_LL":     model.KernelComm,
		"ampere_sgemm_32x128_nt":           model.KernelCompute,
	} {
		if got, ok := classifyHTA(name); !ok || got != want {
			t.Errorf("classifyHTA(%q) = %s %v, want %s", name, got, ok, want)
		}
	}
}
