package detectors

import (
	"sort"

	"github.com/tracedx/tracedx/model"
)

// CorrKey identifies an API call or GPU activity by correlation within its
// scope (the process for Nsight Systems, 0 for Kineto).
type CorrKey struct {
	Scope int32
	Corr  int64
}

// CorrIndex finds API calls by (CorrScope, Correlation). It is a sorted
// list of row numbers rather than a map (4 bytes per call; the keys are
// read from the calls themselves): correlation ids grow with time, so
// lookups in time order mostly hit the entry after the previous one, and
// the list is usually in key order from the start.
type CorrIndex struct {
	t    *model.Trace
	rows []int32
	last int
}

func (x *CorrIndex) key(i int) CorrKey {
	c := &x.t.APICalls[x.rows[i]]
	return CorrKey{Scope: x.t.CallScope(c), Corr: c.Correlation}
}

func keyLess(a, b CorrKey) bool {
	if a.Scope != b.Scope {
		return a.Scope < b.Scope
	}
	return a.Corr < b.Corr
}

// IndexAPI indexes every call of t that keep accepts and that has a
// correlation id.
func IndexAPI(t *model.Trace, keep func(*model.APICall) bool) *CorrIndex {
	n := 0
	for i := range t.APICalls {
		if c := &t.APICalls[i]; c.Correlation != 0 && keep(c) {
			n++
		}
	}
	x := &CorrIndex{t: t, rows: make([]int32, 0, n)}
	sorted := true
	var prev CorrKey
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if c.Correlation == 0 || !keep(c) {
			continue
		}
		k := CorrKey{t.CallScope(c), c.Correlation}
		if len(x.rows) > 0 && !keyLess(prev, k) {
			sorted = false
		}
		prev = k
		x.rows = append(x.rows, int32(i))
	}
	if !sorted {
		sort.SliceStable(x.rows, func(i, j int) bool { return keyLess(x.key(i), x.key(j)) })
	}
	return x
}

// Lookup returns the index in t.APICalls of the call with key k, or -1.
// With duplicate keys it returns the first.
func (x *CorrIndex) Lookup(k CorrKey) int32 {
	n := len(x.rows)
	if n == 0 || k.Corr == 0 {
		return -1
	}
	if j := x.last + 1; j < n && x.key(j) == k && x.key(j-1) != k {
		x.last = j
		return x.rows[j]
	}
	i := sort.Search(n, func(i int) bool { return !keyLess(x.key(i), k) })
	if i < n && x.key(i) == k {
		x.last = i
		return x.rows[i]
	}
	return -1
}
