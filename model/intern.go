package model

// InternTable keeps each distinct value once and numbers the values in order
// of arrival; ID 0 is always the zero value ("none"), so zero records stay
// valid. The zero table is ready to use. Trace.Strings, Trace.Configs,
// Trace.RangeTracks and Trace.APIIdents are built on it.
type InternTable[T comparable, ID ~uint32] struct {
	vals  []T
	index map[T]ID // nil until the first Intern, or after the index is dropped
}

// Intern returns the ID of v, adding it if it is new.
func (in *InternTable[T, ID]) Intern(v T) ID {
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

// Get returns the value with the given ID (the zero value for unknown IDs).
func (in *InternTable[T, ID]) Get(id ID) T { return *in.at(id) }

// at points at the value with the given ID (a fresh zero value for unknown
// IDs), for accessors that read one field of a row's entry without copying
// it. Callers only read through it.
func (in *InternTable[T, ID]) at(id ID) *T {
	if int(id) < len(in.vals) {
		return &in.vals[id]
	}
	return new(T)
}

// Len returns the number of values including the zero one.
func (in *InternTable[T, ID]) Len() int { return max(len(in.vals), 1) }

// dropIndex frees the lookup map once import is over; Intern rebuilds it.
func (in *InternTable[T, ID]) dropIndex() { in.index = nil }

// share returns a table with the same values for another trace (a part of a
// split): its own index, and no spare capacity, so that what one side adds
// never overwrites the other's.
func (in *InternTable[T, ID]) share() InternTable[T, ID] {
	return InternTable[T, ID]{vals: in.vals[:len(in.vals):len(in.vals)]}
}
