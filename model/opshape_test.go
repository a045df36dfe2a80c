package model

import "testing"

func TestGEMMOfOp(t *testing.T) {
	cases := []struct {
		name  string
		dims  [][]int64
		flops float64
		dtype string // the type of the first matrix input
	}{
		// TraceLens reference (H100 Qwen1.5-0.5B): aten::mm M=8944 N=2816 K=1024 → 51.581550592 GFLOP.
		{"aten::mm", [][]int64{{8944, 1024}, {1024, 2816}}, 51581550592, "t0"},
		{"aten::addmm", [][]int64{{1024}, {8944, 1024}, {1024, 1024}}, 2 * 8944 * 1024 * 1024, "t1"},
		{"aten::bmm", [][]int64{{16, 128, 64}, {16, 64, 128}}, 2 * 16 * 128 * 128 * 64, "t0"},
		{"aten::baddbmm", [][]int64{{16, 128, 128}, {16, 128, 64}, {16, 64, 128}}, 2 * 16 * 128 * 128 * 64, "t1"},
		{"aten::linear", [][]int64{{4, 512, 1024}, {4096, 1024}, {4096}}, 2 * 4 * 512 * 4096 * 1024, "t0"},
		{"aten::matmul", [][]int64{{8, 12, 128, 64}, {8, 12, 64, 128}}, 2 * 96 * 128 * 128 * 64, "t0"},
	}
	for _, c := range cases {
		g, dtype, ok := GEMMOfOp(c.name, &OpShape{Dims: c.dims, Types: []string{"t0", "t1", "t2"}})
		if got := g.Flops(); !ok || got != c.flops || dtype != c.dtype {
			t.Errorf("%s %v: %v %q %v, want %v %q", c.name, c.dims, got, dtype, ok, c.flops, c.dtype)
		}
	}
	if _, _, ok := GEMMOfOp("aten::mm", &OpShape{Dims: [][]int64{{4, 5}, {6, 7}}}); ok {
		t.Error("mismatched K accepted")
	}
	if _, _, ok := GEMMOfOp("aten::mm", &OpShape{Dims: [][]int64{{4, 5}}}); ok {
		t.Error("missing input accepted")
	}
}
