package roofline

import "strings"

// Peak is what a GPU can do: dense (no sparsity) matrix throughput per
// precision in TFLOP/s, and memory bandwidth in TB/s.
type Peak struct {
	Name                  string
	BF16, FP8, TF32, FP32 float64
	TBps                  float64
	match                 []string // lower-case substrings of the device name, all required
}

// peaks are from the vendors' datasheets (dense figures, i.e. half of the
// "with sparsity" numbers): NVIDIA H100 (SXM5 / PCIe), H200 SXM, A100
// (SXM 80GB), B200 (HGX B200 per GPU), L40S; AMD Instinct MI300X, MI250X,
// MI250, MI210 (matrix-core figures). FP32 is the non-tensor (CUDA core /
// vector) figure on NVIDIA, the matrix FP32 figure on AMD. First match wins.
var peaks = []Peak{
	{Name: "H200", BF16: 989.4, FP8: 1978.9, TF32: 494.7, FP32: 66.9, TBps: 4.8, match: []string{"h200"}},
	{Name: "H100 PCIe", BF16: 756.0, FP8: 1513.0, TF32: 378.0, FP32: 51.2, TBps: 2.0, match: []string{"h100", "pcie"}},
	{Name: "H100 SXM", BF16: 989.4, FP8: 1978.9, TF32: 494.7, FP32: 66.9, TBps: 3.35, match: []string{"h100"}},
	{Name: "B200", BF16: 2250, FP8: 4500, TF32: 1100, FP32: 80, TBps: 8.0, match: []string{"b200"}},
	{Name: "A100", BF16: 312, TF32: 156, FP32: 19.5, TBps: 2.039, match: []string{"a100"}},
	{Name: "L40S", BF16: 362.05, FP8: 733, TF32: 183, FP32: 91.6, TBps: 0.864, match: []string{"l40s"}},
	{Name: "MI300X", BF16: 1307.4, FP8: 2614.9, TF32: 653.7, FP32: 163.4, TBps: 5.3, match: []string{"mi300x"}},
	{Name: "MI250X", BF16: 383.0, FP32: 95.7, TBps: 3.2, match: []string{"mi250x"}},
	{Name: "MI250", BF16: 362.1, FP32: 90.5, TBps: 3.2, match: []string{"mi250"}},
	{Name: "MI210", BF16: 181.0, FP32: 45.3, TBps: 1.6, match: []string{"mi210"}},
}

// PeakFor returns the table entry for a device name.
func PeakFor(device string) (Peak, bool) {
	d := strings.ToLower(device)
	for _, p := range peaks {
		ok := true
		for _, m := range p.match {
			ok = ok && strings.Contains(d, m)
		}
		if ok {
			return p, true
		}
	}
	return Peak{}, false
}

// For returns the peak TFLOP/s for a Kineto dtype name and the element
// size in bytes; tensorCore says whether an FP32 GEMM ran on tensor cores
// (TF32). 0 when the table has no figure.
func (p Peak) For(dtype string, tensorCore bool) (tflops float64, elem int) {
	switch {
	case strings.Contains(dtype, "BFloat16"), strings.Contains(dtype, "Half"):
		return p.BF16, 2
	case strings.Contains(dtype, "Float8"):
		return p.FP8, 1
	case dtype == "float":
		if tensorCore {
			return p.TF32, 4
		}
		return p.FP32, 4
	}
	return 0, 0
}
