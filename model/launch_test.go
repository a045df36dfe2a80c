package model

import "testing"

func TestConfigTable(t *testing.T) {
	tr := NewTrace("x", FormatNsys)
	if got := tr.InternConfig(LaunchConfig{}); got != NoConfig {
		t.Fatalf("zero config = %d, want NoConfig", got)
	}
	a := LaunchConfig{ShortName: tr.Intern("gemm"), Grid: [3]int32{4, 2, 1}, Block: [3]int32{128, 1, 1}, Registers: 64}
	b := a
	b.SharedMem = 1024
	ia, ib := tr.InternConfig(a), tr.InternConfig(b)
	if ia == NoConfig || ib == NoConfig || ia == ib || tr.InternConfig(a) != ia {
		t.Fatalf("ids %d %d: want distinct, stable and non-zero", ia, ib)
	}
	k := Kernel{Config: ib}
	if tr.LaunchConfig(&k) != b || tr.LaunchConfig(&Kernel{}) != (LaunchConfig{}) {
		t.Fatal("LaunchConfig does not resolve the kernel's configuration")
	}
	tr.Finalize() // drops the index: interning again must rebuild it, not duplicate
	if tr.InternConfig(a) != ia || tr.Configs.Len() != 3 {
		t.Fatalf("after Finalize: id %d, %d configs; want %d, 3", tr.InternConfig(a), tr.Configs.Len(), ia)
	}
	if tr.Configs.Get(99) != (LaunchConfig{}) {
		t.Fatal("an unknown id must give the zero configuration")
	}
	// A shared copy (a part of a split) adds without overwriting the original.
	part := Trace{Configs: tr.Configs.share()}
	c := LaunchConfig{Registers: 9}
	ic := part.InternConfig(c)
	if tr.InternConfig(LaunchConfig{Registers: 10}) != ic || part.Configs.Get(ic) != c {
		t.Fatal("a shared table and its original must grow independently")
	}
	// Stream and graph are part of the configuration: same dimensions on
	// another stream or in a graph are another entry, read back per kernel.
	s := a
	s.Stream, s.GraphID = 7, 3
	is := tr.InternConfig(s)
	if is == ia || tr.KernelStream(&Kernel{Config: is}) != 7 || tr.KernelGraph(&Kernel{Config: is}) != 3 {
		t.Fatalf("stream/graph config %d (plain %d): stream %d graph %d", is, ia, tr.KernelStream(&Kernel{Config: is}), tr.KernelGraph(&Kernel{Config: is}))
	}
	if tr.KernelStream(&Kernel{Config: 99}) != 0 || tr.KernelGraph(&Kernel{Config: 99}) != 0 || tr.KernelStream(&Kernel{}) != 0 {
		t.Fatal("an unknown or zero configuration must give stream 0 and no graph")
	}
}

func TestValidateConfigRange(t *testing.T) {
	tr := NewTrace("x", FormatNsys)
	tr.Devices = []Device{{ID: 0}}
	tr.Kernels = []Kernel{{Start: 1, End: 2, Name: tr.Intern("k"), Config: 5}}
	if err := tr.Validate(); err == nil {
		t.Fatal("a kernel's configuration out of range must fail validation")
	}
	tr.Kernels[0].Config = tr.InternConfig(LaunchConfig{Registers: 32})
	if err := tr.Validate(); err != nil {
		t.Fatal(err)
	}
}
