package model

// StringID names an interned string of a trace. The zero value is the empty
// string, which doubles as "none".
type StringID uint32

// NoString is the StringID of the empty string.
const NoString StringID = 0

// StringTable interns strings. The zero value is ready to use; index 0 is
// always the empty string.
type StringTable struct {
	tab InternTable[string, StringID]
}

// Intern returns the ID of s, adding it if it is new.
func (st *StringTable) Intern(s string) StringID { return st.tab.Intern(s) }

// InternBytes is Intern for a byte slice; it does not allocate when the
// string is already known.
func (st *StringTable) InternBytes(b []byte) StringID {
	if len(b) == 0 {
		return NoString
	}
	if st.tab.index != nil {
		if id, ok := st.tab.index[string(b)]; ok {
			return id
		}
	}
	return st.Intern(string(b))
}

// Lookup returns the ID of s without adding it.
func (st *StringTable) Lookup(s string) (StringID, bool) {
	if s == "" {
		return NoString, true
	}
	id, ok := st.tab.index[s]
	return id, ok
}

// Get returns the string with the given ID ("" for unknown IDs).
func (st *StringTable) Get(id StringID) string { return st.tab.Get(id) }

// Len returns the number of interned strings including the empty string.
func (st *StringTable) Len() int { return st.tab.Len() }
