package model

import "strings"

// OpShape is what Kineto records of a CPU operator's inputs with
// record_shapes=True ("Input Dims", "Input type"), kept for the operators
// whose FLOPs tracedx computes (ShapedOp). Kernels find it by ExternalID.
type OpShape struct {
	ExternalID int64
	Name       StringID
	// Dims holds one shape per input; nil for a scalar, a tensor list or
	// an input whose shape is not a plain list of integers.
	Dims  [][]int64
	Types []string
}

// shapedOps are the operators whose shapes importers keep.
var shapedOps = map[string]bool{
	"aten::mm": true, "aten::addmm": true, "aten::bmm": true, "aten::baddbmm": true,
	"aten::matmul": true, "aten::linear": true, "aten::_scaled_mm": true,
}

// ShapedOp reports whether importers keep the input shapes of operator name.
func ShapedOp(name string) bool { return shapedOps[name] }

// GEMMDims are the dimensions of a (batched) GEMM: B products of an M×K
// by a K×N matrix.
type GEMMDims struct{ B, M, N, K int64 }

// Flops is 2·B·M·N·K (a multiply and an add per term).
func (g GEMMDims) Flops() float64 {
	return 2 * float64(g.B) * float64(g.M) * float64(g.N) * float64(g.K)
}

// Elems is the number of elements of A, B and C (bias not counted).
func (g GEMMDims) Elems() float64 {
	return float64(g.B) * (float64(g.M)*float64(g.K) + float64(g.K)*float64(g.N) + float64(g.M)*float64(g.N))
}

// GEMMOfOp reads the GEMM dimensions of an operator from its input shapes,
// and the dtype of its first matrix input; ok is false when the shapes do
// not fit the operator.
//
//	aten::mm(A[M,K], B[K,N])                  2·M·N·K
//	aten::addmm(C, A[M,K], B[K,N])            2·M·N·K (the bias add is not counted)
//	aten::_scaled_mm(A[M,K], B[K,N], ...)     2·M·N·K
//	aten::bmm(A[b,M,K], B[b,K,N])             2·b·M·N·K
//	aten::baddbmm(C, A[b,M,K], B[b,K,N])      2·b·M·N·K
//	aten::linear(X[...,K], W[N,K], ...)       2·prod(...)·N·K
//	aten::matmul(A[...,M,K], B[K,N] or [...,K,N]) 2·batch·M·N·K
func GEMMOfOp(name string, s *OpShape) (g GEMMDims, dtype string, ok bool) {
	in := func(i, rank int) []int64 {
		if i < len(s.Dims) && (rank == 0 && len(s.Dims[i]) > 0 || len(s.Dims[i]) == rank) {
			return s.Dims[i]
		}
		return nil
	}
	typ := func(i int) string {
		if i < len(s.Types) {
			return s.Types[i]
		}
		return ""
	}
	// gemm returns the dimensions and the dtype of input i; ok is false
	// when a dimension is not positive.
	gemm := func(b, m, n, k int64, i int) (GEMMDims, string, bool) {
		if b <= 0 || m <= 0 || n <= 0 || k <= 0 {
			return GEMMDims{}, "", false
		}
		return GEMMDims{b, m, n, k}, typ(i), true
	}
	switch name {
	case "aten::mm", "aten::_scaled_mm", "aten::addmm", "aten::baddbmm", "aten::bmm":
		first := 0
		if name == "aten::addmm" || name == "aten::baddbmm" {
			first = 1
		}
		rank := 2
		if strings.Contains(name, "bmm") {
			rank = 3
		}
		a, b := in(first, rank), in(first+1, rank)
		if a == nil || b == nil {
			return GEMMDims{}, "", false
		}
		batch := int64(1)
		if rank == 3 {
			batch, a, b = a[0], a[1:], b[1:]
		}
		if a[1] != b[0] {
			return GEMMDims{}, "", false
		}
		return gemm(batch, a[0], b[1], a[1], first)
	case "aten::linear":
		x, w := in(0, 0), in(1, 2)
		if x == nil || w == nil || x[len(x)-1] != w[1] {
			return GEMMDims{}, "", false
		}
		rows := int64(1)
		for _, d := range x[:len(x)-1] {
			rows *= d
		}
		return gemm(1, rows, w[0], w[1], 0)
	case "aten::matmul":
		a, b := in(0, 0), in(1, 0)
		if len(a) < 2 || len(b) < 2 {
			return GEMMDims{}, "", false
		}
		m, k := a[len(a)-2], a[len(a)-1]
		kb, n := b[len(b)-2], b[len(b)-1]
		if k != kb {
			return GEMMDims{}, "", false
		}
		batch := int64(1)
		for _, d := range a[:len(a)-2] {
			batch *= d
		}
		return gemm(batch, m, n, k, 0)
	}
	return GEMMDims{}, "", false
}
