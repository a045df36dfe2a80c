package model

import "testing"

func TestAPIIdents(t *testing.T) {
	tr := NewTrace("x", FormatNsys)
	if got := tr.InternAPI(APIIdent{}); got != 0 {
		t.Fatalf("zero identity = %d, want 0", got)
	}
	launch := APIIdent{Name: tr.Intern("cudaLaunchKernel"), Scope: 100, Class: APILaunch}
	other := launch
	other.Scope = 200 // the same function in another process
	a, b := tr.InternAPI(launch), tr.InternAPI(other)
	if a == 0 || b == 0 || a == b || tr.InternAPI(launch) != a {
		t.Fatalf("ids %d %d: want distinct, stable and non-zero", a, b)
	}
	c := APICall{Ident: b}
	if tr.CallName(&c) != launch.Name || tr.CallScope(&c) != 200 || tr.CallClass(&c) != APILaunch ||
		tr.CallSource(&c) != APIRuntime || tr.APIIdentOf(&c) != other {
		t.Fatalf("accessors of %+v give %+v", c, tr.APIIdentOf(&c))
	}
	bad := APICall{Ident: 99}
	if tr.APIIdentOf(&bad) != (APIIdent{}) || tr.CallName(&bad) != NoString || tr.CallScope(&bad) != 0 {
		t.Fatal("an unknown id must give the zero identity")
	}
	tr.Threads = []Thread{{PID: 100, TID: 100}}
	tr.APICalls = []APICall{{Start: 1, End: 2, Ident: a}, {Start: 3, End: 4, Ident: 99}}
	if err := tr.Validate(); err == nil {
		t.Fatal("an API identity out of range must fail validation")
	}
	tr.APICalls = tr.APICalls[:1]
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
}
