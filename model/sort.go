package model

import "slices"

// sortStable sorts s stably by c, skipping the sort when s is already in
// order (the common case for captures written in time order).
//
// It sorts a permutation of 4-byte indexes, then moves the records once, in
// place: a merge sort of the records themselves needs a buffer as large as
// the table (102 MB for the ranges of a 1 GB Kineto trace), and Finalize
// sorts the tables concurrently, so those buffers used to coexist with the
// whole model at the import's peak.
//
// The comparator takes values: taking their addresses would move every
// compared pair to the heap.
func sortStable[T any](s []T, c func(a, b T) int) {
	sorted := true
	for i := 1; i < len(s); i++ {
		if c(s[i-1], s[i]) > 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	if uint64(len(s)) > 1<<32-1 {
		slices.SortStableFunc(s, c)
		return
	}
	permute(s, sortedOrder(s, c))
}

// sortedOrder returns the stable sorted order of s by c: element i of the
// result is the index in s of the record that goes to position i. It is a
// bottom-up merge sort of indexes (insertion-sorted runs of 24, then merges
// that take the left run on ties), so equal records keep their input order.
func sortedOrder[T any](s []T, c func(a, b T) int) []uint32 {
	const run = 24
	n := len(s)
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)
	}
	for lo := 0; lo < n; lo += run {
		hi := min(lo+run, n)
		for i := lo + 1; i < hi; i++ {
			for j := i; j > lo && c(s[p[j-1]], s[p[j]]) > 0; j-- {
				p[j-1], p[j] = p[j], p[j-1]
			}
		}
	}
	if n <= run {
		return p
	}
	buf := make([]uint32, n)
	src, dst := p, buf
	for width := run; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			if mid == hi || c(s[src[mid-1]], s[src[mid]]) <= 0 {
				// Already in order (Kineto's disorder is local).
				copy(dst[lo:hi], src[lo:hi])
				continue
			}
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				if c(s[src[j]], s[src[i]]) < 0 {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	return src
}

// permute moves s[p[i]] to position i for every i, in place, following
// each cycle of p once (p is consumed: it ends as the identity).
func permute[T any](s []T, p []uint32) {
	for i := range s {
		if int(p[i]) == i {
			continue
		}
		v := s[i]
		j := i
		for {
			k := int(p[j])
			p[j] = uint32(j)
			if k == i {
				s[j] = v
				break
			}
			s[j] = s[k]
			j = k
		}
	}
}

// cmpChain returns the first non-zero comparison.
func cmpChain(cs ...int) int {
	for _, c := range cs {
		if c != 0 {
			return c
		}
	}
	return 0
}
