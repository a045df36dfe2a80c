package detectors

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Median must give what a sorted copy gives, on both of its paths (a copy
// for small counts, counting passes for large ones), for any int64 values.
func TestMedianMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gens := map[string]func() int64{
		"durations": func() int64 { return rng.Int64N(5_000_000) },
		"few":       func() int64 { return int64(rng.IntN(3)) * 1000 },
		"wide":      func() int64 { return int64(rng.Uint64()) },
		"extremes": func() int64 {
			return []int64{math.MinInt64, math.MaxInt64, -1, 0, 1}[rng.IntN(5)]
		},
	}
	for name, gen := range gens {
		for _, n := range []int{1, 2, 3, 10, selectCollect, selectCollect + 1, selectCollect + 2, 3*selectCollect + 7} {
			vs := make([]int64, n)
			for i := range vs {
				vs[i] = gen()
			}
			each := func(yield func(int64)) {
				for _, v := range vs {
					yield(v)
				}
			}
			got := Median(n, each)
			s := slices.Sorted(slices.Values(vs))
			want := s[n/2]
			if n%2 == 0 {
				want = (s[n/2-1] + s[n/2]) / 2
			}
			if got != want {
				t.Errorf("%s, n=%d: median %d, want %d", name, n, got, want)
			}
			for _, k := range []int{0, n / 3, n - 1} {
				if got := kth(each, k); got != s[k] {
					t.Errorf("%s, n=%d: kth(%d) = %d, want %d", name, n, k, got, s[k])
				}
			}
		}
	}
	if Median(0, func(func(int64)) {}) != 0 {
		t.Error("median of nothing")
	}
}
