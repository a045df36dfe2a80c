package model

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"
)

// TestSortStableMatchesStdlib checks the permutation sort against the
// standard library's stable sort: same order, equal keys in input order.
func TestSortStableMatchesStdlib(t *testing.T) {
	type rec struct{ key, seq int }
	byKey := func(a, b rec) int { return cmp.Compare(a.key, b.key) }
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{0, 1, 2, 23, 24, 25, 48, 49, 100, 1000, 5000} {
		for _, shape := range []string{"random", "ties", "nearly", "reversed"} {
			s := make([]rec, n)
			for i := range s {
				switch shape {
				case "random":
					s[i].key = rng.Intn(1 << 20)
				case "ties":
					s[i].key = rng.Intn(5)
				case "nearly":
					s[i].key = i + rng.Intn(40)
				case "reversed":
					s[i].key = n - i/3
				}
				s[i].seq = i
			}
			want := slices.Clone(s)
			slices.SortStableFunc(want, byKey)
			sortStable(s, byKey)
			if !slices.Equal(s, want) {
				t.Fatalf("n=%d %s: order differs from slices.SortStableFunc", n, shape)
			}
		}
	}
}
