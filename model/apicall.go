package model

// APIIdent is what an API call is besides its times, thread and ids: its
// name, its class and source (which follow from the name and the table it
// came from) and its correlation scope (the process for Nsight Systems, 0 for
// Kineto). A trace has a few hundred distinct ones (names × processes), so
// they are interned (Trace.APIIdents) and an APICall holds a 4-byte
// APIIdentID: 8 bytes per API call row fewer.
type APIIdent struct {
	Name StringID
	// Scope is the correlation scope of the call's Correlation (see Kernel).
	Scope  int32
	Class  APIClass
	Source APISource
}

// APIIdentID indexes a trace's API identities; 0 is the zero APIIdent (no
// name, scope 0, APIOther, APIRuntime), what a zero APICall always meant.
type APIIdentID uint32

// APIIdentTable interns API identities; index 0 is the zero one.
type APIIdentTable = InternTable[APIIdent, APIIdentID]

// InternAPI interns id in the trace's API identity table.
func (t *Trace) InternAPI(id APIIdent) APIIdentID { return t.APIIdents.Intern(id) }

// APIIdentOf returns the name, class, source and scope of call a.
func (t *Trace) APIIdentOf(a *APICall) APIIdent { return t.APIIdents.Get(a.Ident) }

// CallName returns the name of API call a.
func (t *Trace) CallName(a *APICall) StringID { return t.APIIdents.at(a.Ident).Name }

// CallClass returns the class of API call a.
func (t *Trace) CallClass(a *APICall) APIClass { return t.APIIdents.at(a.Ident).Class }

// CallSource returns the API layer of call a.
func (t *Trace) CallSource(a *APICall) APISource { return t.APIIdents.at(a.Ident).Source }

// CallScope returns the correlation scope of call a.
func (t *Trace) CallScope(a *APICall) int32 { return t.APIIdents.at(a.Ident).Scope }
