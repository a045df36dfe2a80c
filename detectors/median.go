package detectors

import (
	"math"
	"slices"
)

// selectBuckets is how many value ranges one pass of Median counts.
const selectBuckets = 4096

// selectCollect is the count up to which Median sorts a copy of the values:
// below it the copy is small, above it the passes cost less than the copy.
const selectCollect = 1 << 16

// Median returns the median of the n values that each yields (the mean of
// the two middle ones, rounded toward zero, for even n; 0 for none), as a
// sorted copy would give it, without keeping the values: each may be called
// several times and must yield the same values each time. On millions of
// kernels a sorted copy of their durations was 16 MB per list.
func Median(n int, each func(yield func(int64))) int64 {
	switch {
	case n == 0:
		return 0
	case n <= selectCollect:
		vs := make([]int64, 0, n)
		each(func(v int64) { vs = append(vs, v) })
		slices.Sort(vs)
		if n%2 == 1 {
			return vs[n/2]
		}
		return (vs[n/2-1] + vs[n/2]) / 2
	case n%2 == 1:
		return kth(each, n/2)
	}
	return (kth(each, n/2-1) + kth(each, n/2)) / 2
}

// kth returns the k-th smallest (from 0) of the values each yields: each
// pass counts the values in selectBuckets ranges of [lo, hi] and narrows to
// the range that holds the k-th, so at most six passes find it.
func kth(each func(yield func(int64)), k int) int64 {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	each(func(v int64) { lo, hi = min(lo, v), max(hi, v) })
	var counts [selectBuckets]int
	for lo < hi {
		w := uint64(hi-lo)/selectBuckets + 1 // hi-lo as uint64 cannot overflow
		clear(counts[:])
		below := 0
		each(func(v int64) {
			switch {
			case v < lo:
				below++
			case v <= hi:
				counts[uint64(v-lo)/w]++
			}
		})
		b := 0
		for ; b < selectBuckets-1 && below+counts[b] <= k; b++ {
			below += counts[b]
		}
		nlo := lo + int64(uint64(b)*w)
		if rest := uint64(hi - nlo); rest >= w {
			hi = nlo + int64(w-1)
		}
		lo = nlo
	}
	return lo
}
