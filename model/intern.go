package model

// interned keeps each distinct value once and numbers them in order of
// arrival; index 0 is always the zero value ("none"). The zero value is ready
// to use. StringTable and ConfigTable are built on it.
type interned[T comparable, ID ~uint32] struct {
	vals  []T
	index map[T]ID // nil until the first intern, or after the index is dropped
}

// intern returns the ID of v, adding it if it is new.
func (in *interned[T, ID]) intern(v T) ID {
	var zero T
	if v == zero {
		return 0
	}
	if in.index == nil {
		if len(in.vals) == 0 {
			in.vals = append(in.vals, zero)
		}
		in.index = make(map[T]ID, len(in.vals))
		for i, x := range in.vals {
			in.index[x] = ID(i)
		}
	}
	if id, ok := in.index[v]; ok {
		return id
	}
	id := ID(len(in.vals))
	in.vals = append(in.vals, v)
	in.index[v] = id
	return id
}

// get returns the value with the given ID (the zero value for unknown IDs).
func (in *interned[T, ID]) get(id ID) T {
	if int(id) >= len(in.vals) {
		var zero T
		return zero
	}
	return in.vals[id]
}

// size returns the number of values including the zero one.
func (in *interned[T, ID]) size() int { return max(len(in.vals), 1) }
