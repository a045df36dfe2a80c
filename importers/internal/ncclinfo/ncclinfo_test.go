package ncclinfo

import (
	"reflect"
	"testing"

	"github.com/tracedx/tracedx/model"
)

// read applies INFO messages (WARN ones start with "WARN ") to fresh facts.
func read(msgs ...string) (model.NCCLFacts, []Seen) {
	var f model.NCCLFacts
	r := New(&f)
	r.Ranks = true
	var seen []Seen
	for _, m := range msgs {
		kind := "INFO"
		if len(m) > 5 && m[:5] == "WARN " {
			kind, m = "WARN", m[5:]
		}
		seen = append(seen, r.Apply(kind, m))
	}
	r.Finish()
	return f, seen
}

func TestFacts(t *testing.T) {
	f, _ := read(
		"NCCL version 2.21.5+cuda12.4",
		"NCCL version 2.18.1 something",
		"Using network IB",
		"Using network Socket",
		"Using network IB",
		"NET/OFI Selected provider is efa (aws-ofi-nccl)",
		"GPU Direct RDMA Enabled for HCA 0 'mlx5_0'",
		"NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1'",
		"NVLS multicast support is not available on dev 0",
		"NVLS multicast support is available on dev 1",
		"NVLS multicast support is not available on dev 2",
		"NVLS Head  0:  0  8",
		"NVLS Head  1:  1  9",
		"8 coll channels, 8 collnet channels, 16 nvls channels, 8 p2p channels, 2 p2p channels per peer",
		"4 coll channels, 4 p2p channels, 1 p2p channels per peer",
		"Channel 00/02 :    0   1   2   3",
		"Channel 01/02 :    0   1   2   3",
		"comm 0x1 rank 1 nranks 4 cudaDev 1 nvmlDev 1 busId 1000 commId 0x2 - Init COMPLETE",
		"comm 0x1 rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 0",
		"NCCL_P2P_DISABLE set by environment to 1.",
		"NCCL_IB_HCA set by environment to mlx5_0",
		"Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read",
		"Channel 00/0 : 1[1] -> 2[0] [send] via NET/IB/1(0)/GDRDMA",
		"Channel 01/0 : 1[1] -> 2[0] [send] via NET/IB/1/GDRDMA/Shared",
		"Channel 00 : 0[0] -> 1[1] via direct shared memory",
		"WARN NET/IB : Failed to open libibverbs.so[.1]",
		"WARN NET/IB : Failed to open libibverbs.so[.1]",
	)
	want := model.NCCLFacts{
		Version: "2.21.5+cuda12.4", Network: "IB", Networks: []string{"IB", "Socket"}, OFIProvider: "efa",
		GDREnabled: 1, GDRDisabled: 1, NVLSSupport: 1, NVLSHeads: 2,
		CollChannels: 8, CollNetChannels: 8, NVLSChannels: 16, P2PChannels: 8, RingChannels: 2,
		InitComplete: 1, InitRanks: 4, Nodes: 2, P2PDisabledHint: true, NoIBVerbs: true,
		Env:        []string{"NCCL_IB_HCA=mlx5_0", "NCCL_P2P_DISABLE=1"},
		Transports: []string{"NET/IB/GDRDMA", "P2P/IPC/read", "SHM/direct"},
		TransportUse: []model.NCCLTransport{{Name: "NET/IB/GDRDMA", Conns: 2}, {Name: "P2P/IPC/read", Conns: 1},
			{Name: "SHM/direct", Conns: 1}},
		InfoLines: 25, WarnLines: 2, Warnings: []string{"NET/IB : Failed to open libibverbs.so[.1]"},
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("facts\n got %+v\nwant %+v", f, want)
	}
}

func TestSeen(t *testing.T) {
	f, seen := read(
		"Bootstrap : Using eth0:10.0.0.1<0>",
		"NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
		"NET/Socket : Using [0]eth0:10.0.4.1<0>",
		"Channel 00/0 : 3[1] -> 4[0] [receive] via NET/Socket/0",
		"Trees [0] 1/-1/-1->2->-1 [1] -1/-1/-1->2->1",
		"Ring 00 : 4 -> 5 -> 6",
		"comm 0x1 rank 7 nranks 16 cudaDev 1 - Init COMPLETE",
	)
	want := []Seen{
		{Rank: -1, Net: "Bootstrap", Device: "Bootstrap: eth0:10.0.0.1<0>", Using: "eth0:10.0.0.1<0>"},
		{Rank: -1, Net: "IB", Device: "IB: [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]", Using: "[0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]", OOB: "; OOB eth0:10.0.0.1<0>"},
		{Rank: -1, Net: "Socket", Device: "Socket: [0]eth0:10.0.4.1<0>", Using: "[0]eth0:10.0.4.1<0>"},
		{Rank: 3},
		{Rank: 2},
		{Rank: 5},
		{Rank: 7, NRanks: 16},
	}
	if !reflect.DeepEqual(seen, want) {
		t.Errorf("seen\n got %+v\nwant %+v", seen, want)
	}
	if len(f.NetDevices) != 3 || f.Transports[0] != "NET/Socket" {
		t.Errorf("devices %q transports %q", f.NetDevices, f.Transports)
	}
}

func TestCaps(t *testing.T) {
	var msgs []string
	for i := range 300 {
		msgs = append(msgs, "WARN w"+string(rune('a'+i%26))+string(rune('a'+i/26)), "Using network n"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	f, _ := read(msgs...)
	if len(f.Warnings) != maxWarnings || len(f.Networks) != MaxListed || f.WarnLines != 300 {
		t.Errorf("warnings %d networks %d warn lines %d", len(f.Warnings), len(f.Networks), f.WarnLines)
	}
}

func FuzzApply(f *testing.F) {
	for _, s := range []string{"Channel 00/0 : 0[0] -> 1[1] via NET/IB/0", "NET/IB : Using", "Bootstrap: Using x:1<0>",
		"1 coll channels, 2 p2p channels", "rank 99999999999999999999 nranks 1", " via ", "NET/"} {
		f.Add("INFO", s)
	}
	f.Add("WARN", "Failed to open libibverbs")
	f.Fuzz(func(t *testing.T, kind, msg string) {
		var facts model.NCCLFacts
		r := New(&facts)
		r.Apply(kind, msg)
		r.Apply(kind, msg)
		r.Finish()
	})
}

// NCCL 2.19+ prints the communicator size as "nRanks" in its topology line.
func TestCamelCaseNRanks(t *testing.T) {
	f, seen := read("comm 0x5581 rank 3 nRanks 24 nNodes 3 localRanks 8 localRank 3 MNNVL 0")
	if len(seen) != 1 || seen[0].NRanks != 24 || seen[0].Rank != 3 || f.Nodes != 3 {
		t.Errorf("nRanks line: seen %+v, nodes %d; want rank 3, nranks 24, nodes 3", seen, f.Nodes)
	}
}

func TestHostOf(t *testing.T) {
	for tok, want := range map[string]string{"node-a:123:456": "node-a", "[rank0]:gpu-01:7:8": "gpu-01", "[1,0]<stdout>:h.example:1:2": "h.example",
		"host:12": "", "host:1:x": "", ":1:2": "", "[0]": "", "10.0.0.1:1:2": "10.0.0.1"} {
		got, ok := HostOf([]byte(tok))
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", tok, got, ok, want)
		}
	}
}
