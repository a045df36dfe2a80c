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
// slice rather than a map: correlation ids grow with time, so lookups in
// time order mostly hit the entry after the previous one.
type CorrIndex struct {
	keys []corrEntry
	last int
}

// corrEntry is 16 bytes (a CorrKey field would pad it to 24).
type corrEntry struct {
	corr  int64
	scope int32
	idx   int32
}

func (e corrEntry) key() CorrKey { return CorrKey{Scope: e.scope, Corr: e.corr} }

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
	x := &CorrIndex{keys: make([]corrEntry, 0, n)}
	sorted := true
	for i := range t.APICalls {
		c := &t.APICalls[i]
		if c.Correlation == 0 || !keep(c) {
			continue
		}
		k := CorrKey{c.CorrScope, c.Correlation}
		if n := len(x.keys); n > 0 && !keyLess(x.keys[n-1].key(), k) {
			sorted = false
		}
		x.keys = append(x.keys, corrEntry{corr: k.Corr, scope: k.Scope, idx: int32(i)})
	}
	if !sorted {
		sort.SliceStable(x.keys, func(i, j int) bool { return keyLess(x.keys[i].key(), x.keys[j].key()) })
	}
	return x
}

// Lookup returns the index in t.APICalls of the call with key k, or -1.
// With duplicate keys it returns the first.
func (x *CorrIndex) Lookup(k CorrKey) int32 {
	n := len(x.keys)
	if n == 0 || k.Corr == 0 {
		return -1
	}
	if j := x.last + 1; j < n && x.keys[j].key() == k && x.keys[j-1].key() != k {
		x.last = j
		return x.keys[j].idx
	}
	i := sort.Search(n, func(i int) bool { return !keyLess(x.keys[i].key(), k) })
	if i < n && x.keys[i].key() == k {
		x.last = i
		return x.keys[i].idx
	}
	return -1
}
