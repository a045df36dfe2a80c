package nccltransport

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/nccltests"
	"github.com/tracedx/tracedx/model"
)

// infoLog writes NCCL INFO lines for 2 nodes x 2 GPUs followed by a tiny
// all_reduce table. intra/inter are the "via" transports, nvlsCh the nvls
// channel count.
func infoLog(network, intra, inter string, nvlsCh int, extra ...string) string {
	var b strings.Builder
	hosts := []string{"node-a", "node-b"}
	for hi, h := range hosts {
		for d := 0; d < 2; d++ {
			r := hi*2 + d
			pre := fmt.Sprintf("%s:%d:%d [%d] NCCL INFO ", h, 100+r, 200+r, d)
			fmt.Fprintf(&b, "%sNET/IB : Using [0]mlx5_%d:1/IB [RO]; OOB eth0:10.0.0.%d<0>\n", pre, d, hi+1)
			fmt.Fprintf(&b, "%sUsing network %s\n", pre, network)
			fmt.Fprintf(&b, "%sNVLS multicast support is available on dev %d\n", pre, d)
			fmt.Fprintf(&b, "%sChannel 00/0 : %d[%d] -> %d[%d] via %s\n", pre, r, d, hi*2+(d+1)%2, (d+1)%2, intra)
			fmt.Fprintf(&b, "%sChannel 01/0 : %d[%d] -> %d[%d] [send] via %s\n", pre, r, d, (r+2)%4, d, inter)
			fmt.Fprintf(&b, "%s16 coll channels, 0 collnet channels, %d nvls channels, 32 p2p channels, 32 p2p channels per peer\n", pre, nvlsCh)
			for _, e := range extra {
				fmt.Fprintf(&b, "%s%s\n", pre, e)
			}
		}
	}
	b.WriteString("# nThread 1 nGpus 1 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n# Using devices\n")
	for r := 0; r < 4; r++ {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0000:%02x:00] NVIDIA H100 80GB HBM3\n", r, 100+r, hosts[r/2], r%2, r%2+1)
	}
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n")
	b.WriteString("     1048576        262144     float     sum      -1    20.00   52.43   78.64       0    20.00   52.43   78.64       0\n")
	b.WriteString("     2097152        524288     float     sum      -1    30.00   69.91  104.86       0    30.00   69.91  104.86       0\n")
	b.WriteString("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 91.75 \n")
	return b.String()
}

func analyze(t *testing.T, text string) detectors.Result {
	t.Helper()
	tr, err := nccltests.Parse(strings.NewReader(text), "fixture.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
	if len(res.Errors) > 0 {
		t.Fatal(res.Errors)
	}
	return res
}

func TestClean(t *testing.T) {
	res := analyze(t, infoLog("IB", "P2P/CUMEM/read", "NET/IB/0/GDRDMA", 16))
	for _, f := range res.Findings {
		if f.Severity != model.SevInfo || !strings.Contains(f.Title, "nothing wrong") {
			t.Errorf("unexpected finding: %s", f.Message)
		}
	}
	if len(res.Findings) != 1 {
		t.Errorf("a clean INFO log should say what was checked: %+v", res.Findings)
	}
}

// TestHostsAndInterfaces: one host on mlx5_0, the other on mlx5_1, and a
// libvirt bridge offered for bootstrap: both named.
func TestHostsAndInterfaces(t *testing.T) {
	text := "node-a:1:1 [0] NCCL INFO Bootstrap : Using virbr0:192.168.122.1<0>\n" +
		"node-a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n" +
		"node-b:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB ; OOB eth0:10.0.0.2<0>\n" +
		"node-a:1:1 [0] NCCL INFO Using network IB\n" +
		"node-a:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA\n"
	res := analyze(t, text)
	var titles []string
	for _, f := range res.Findings {
		titles = append(titles, f.Title+": "+f.Message)
	}
	all := strings.Join(titles, "\n")
	if !strings.Contains(all, "mlx5_0 on node-a; mlx5_1 on node-b") || !strings.Contains(all, "virbr0") {
		t.Errorf("want different HCAs per host and the virtual interface named:\n%s", all)
	}
}

func TestPlanted(t *testing.T) {
	res := analyze(t, infoLog("Socket", "SHM/direct/direct", "NET/Socket/0", 0, "NCCL_IB_DISABLE set by environment to 1."))
	titles := map[string]string{}
	for _, f := range res.Findings {
		titles[f.Title] = f.Message
	}
	for _, want := range []string{"NCCL falls back to TCP sockets between nodes", "No GPU peer-to-peer transport inside a node", "NVLS (NVLink SHARP) available but unused"} {
		if titles[want] == "" {
			t.Errorf("missing %q; got %v", want, titles)
		}
	}
	if m := titles["NCCL falls back to TCP sockets between nodes"]; !strings.Contains(m, "4 NET/Socket connections of 4") || !strings.Contains(m, "NCCL_IB_DISABLE=1") {
		t.Errorf("socket message: %s", m)
	}
	res = analyze(t, infoLog("IB", "P2P/CUMEM/read", "NET/IB/0", 16))
	if len(res.Findings) != 1 || res.Findings[0].Title != "GPUDirect RDMA is off" || !strings.Contains(res.Findings[0].Message, "4 RDMA network connections, 0 with GDRDMA") {
		t.Errorf("GDR: %+v", res.Findings)
	}
}

// TestNoInfo: without INFO lines the rule is not measurable, except for the
// inferred NVLS check on an 8-GPU ring-level plateau.
func TestNoInfo(t *testing.T) {
	var b strings.Builder
	b.WriteString("# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 8 minBytes 268435456 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n")
	for r := 0; r < 8; r++ {
		fmt.Fprintf(&b, "#  Rank %2d Group  0 Pid   1000 on     node-a device %2d [0000:%02x:00] NVIDIA H100 80GB HBM3\n", r, r, r+1)
	}
	b.WriteString("#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n")
	for _, s := range []int64{268435456, 536870912, 1073741824} {
		alg := 210.0
		fmt.Fprintf(&b, "%12d %12d float sum -1 %8.1f %7.2f %7.2f 0 %8.1f %7.2f %7.2f 0\n", s, s/4, float64(s)/alg/1e3, alg, alg*1.75, float64(s)/alg/1e3, alg, alg*1.75)
	}
	b.WriteString("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 367.5 \n")
	res := analyze(t, b.String())
	if len(res.Findings) != 1 || res.Findings[0].Confidence != model.Inferred || !strings.Contains(res.Findings[0].Message, "367.50 GB/s") {
		t.Errorf("inferred NVLS: %+v", res.Findings)
	}
	if len(res.NotMeasurable) == 0 {
		t.Error("no not-measurable note without INFO lines")
	}
}

// TestDockerBridgeBootstrap: docker_gwbridge (and other virtual names that
// are not a bare prefix plus digits) is virtual too, as collective-timeout
// already judged it.
func TestDockerBridgeBootstrap(t *testing.T) {
	text := "node-a:1:1 [0] NCCL INFO Bootstrap : Using docker_gwbridge:172.18.0.1<0>\n" +
		"node-a:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n" +
		"node-a:1:1 [0] NCCL INFO Using network IB\n"
	res := analyze(t, text)
	for _, f := range res.Findings {
		if strings.Contains(f.Title, "virtual or loopback") && strings.Contains(f.Message, "docker_gwbridge") {
			return
		}
	}
	t.Errorf("docker_gwbridge not reported as virtual: %+v", res.Findings)
}
