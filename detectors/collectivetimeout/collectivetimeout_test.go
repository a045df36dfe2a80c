package collectivetimeout

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/joblog"
	"github.com/tracedx/tracedx/model"
)

func analyse(t *testing.T, text string) detectors.Result {
	t.Helper()
	tr, err := joblog.Parse(strings.NewReader(text), "job.log", importers.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return detectors.Run(model.NewTraceSet([]*model.Trace{tr}), []*detectors.Detector{Detector}, detectors.Config{})
}

func find(res detectors.Result, prefix string) *model.Finding {
	for i := range res.Findings {
		if strings.HasPrefix(res.Findings[i].Title, prefix) {
			return &res.Findings[i]
		}
	}
	return nil
}

// ncclHost writes a host's NCCL lines for ranks base, base+1.
func ncclHost(b *strings.Builder, host string, base, world int, net, hca, ifname string) {
	for d := 0; d < 2; d++ {
		pre := fmt.Sprintf("[rank%d]:%s:%d:%d [%d] NCCL INFO ", base+d, host, 10+d, 20+d, d)
		fmt.Fprintf(b, "%sBootstrap : Using %s:10.0.0.%d<0>\n", pre, ifname, base)
		if net == "IB" {
			fmt.Fprintf(b, "%sNET/IB : Using [0]%s:1/IB ; OOB eth0:10.0.0.%d<0>\n", pre, hca, base)
			fmt.Fprintf(b, "%sChannel 00/0 : %d[%d] -> %d[0] [send] via NET/IB/0/GDRDMA\n", pre, base+d, d, (base+2)%world)
		} else {
			fmt.Fprintf(b, "%sNET/Socket : Using [0]%s:10.0.0.%d<0>\n", pre, ifname, base)
			fmt.Fprintf(b, "%sChannel 00/0 : %d[%d] -> %d[0] [send] via NET/Socket/0\n", pre, base+d, d, (base+2)%world)
		}
		fmt.Fprintf(b, "%sUsing network %s\n", pre, net)
		fmt.Fprintf(b, "%sChannel 01/0 : %d[%d] -> %d[%d] via P2P/IPC/read\n", pre, base+d, d, base+1-d, 1-d)
		fmt.Fprintf(b, "%scomm 0x1 rank %d nranks %d cudaDev %d busId 1000 commId 0x2 - Init COMPLETE\n", pre, base+d, world, d)
	}
}

func TestPlantedMidRunHang(t *testing.T) {
	var b strings.Builder
	for r := 0; r < 3; r++ {
		fmt.Fprintf(&b, "[rank%d]:[E1103 14:02:%02d.000000 ProcessGroupNCCL.cpp:616] [PG ID 0 PG GUID 0(default_pg) Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=42, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for %d milliseconds before timing out.\n",
			r, 10+r, r, 600000+r*1000-r*250)
		fmt.Fprintf(&b, "[rank%d]:[E1103 14:02:%02d.100000 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: 42, last enqueued NCCL work: 42, last completed NCCL work: 41.\n", r, 10+r, r)
	}
	b.WriteString("[rank3]:[E1103 14:10:00.000000 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 3] Timeout at NCCL work: 41, last enqueued NCCL work: 41, last completed NCCL work: 41.\n")
	res := analyse(t, b.String())
	f := find(res, "Collective timeout: ALLREDUCE SeqNum 42")
	if f == nil {
		t.Fatalf("no hang finding: %+v", res.Findings)
	}
	for _, want := range []string{"mid-run", "Rank(s) 3 never arrived", "timed out on 3 rank(s) (0, 1, 2)", "Arrival skew"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if m, _ := f.Metric("arrival_skew_ms"); m.Value != 500 {
		t.Errorf("skew %v ms, want 500", m.Value)
	}
}

func TestPlantedStartupHang(t *testing.T) {
	res := analyse(t, `[rank0]:[E ProcessGroupNCCL.cpp:563] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600086 milliseconds before timing out.
[rank0]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 0] Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: 0.
[rank0]:RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5
`)
	f := find(res, "Collective timeout")
	if f == nil || !strings.Contains(f.Message, "at start-up") {
		t.Fatalf("want a start-up hang: %+v", res.Findings)
	}
	if find(res, "NCCL unhandled system error") == nil {
		t.Errorf("no system-error finding")
	}
}

func TestPlantedTransportFaults(t *testing.T) {
	var b strings.Builder
	ncclHost(&b, "node-a", 0, 6, "IB", "mlx5_0", "eth0")
	ncclHost(&b, "node-b", 2, 6, "IB", "mlx5_1", "eth0")
	ncclHost(&b, "node-c", 4, 6, "Socket", "", "virbr0")
	b.WriteString("node-c:10:20 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n")
	res := analyse(t, b.String())
	for _, title := range []string{"Socket fallback on some hosts", "Hosts use different HCAs", "Virtual or loopback interface", "P2P disabled"} {
		if find(res, title) == nil {
			t.Errorf("no %q finding", title)
		}
	}
	if f := find(res, "Socket fallback"); f != nil && !strings.Contains(f.Message, "node-c") {
		t.Errorf("socket finding does not name node-c: %s", f.Message)
	}
}

func TestCleanNCCLInfoOnly(t *testing.T) {
	var b strings.Builder
	ncclHost(&b, "node-a", 0, 4, "IB", "mlx5_0", "eth0")
	ncclHost(&b, "node-b", 2, 4, "IB", "mlx5_0", "eth0")
	res := analyse(t, b.String())
	if len(res.Findings) != 1 || res.Findings[0].Severity != model.SevInfo {
		t.Fatalf("want one info finding, got %+v", res.Findings)
	}
	if !strings.Contains(res.Findings[0].Message, "Checked:") {
		t.Errorf("info finding does not say what it checked: %s", res.Findings[0].Message)
	}
}

func TestQuietOnEngineLog(t *testing.T) {
	res := analyse(t, "INFO 07-28 06:42:09 [loggers.py:118] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 240.8 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 50.0%, Prefix cache hit rate: 0.0%\n")
	if len(res.Findings) != 0 || len(res.NotMeasurable) != 1 {
		t.Fatalf("want no finding and one not-measurable, got %+v %+v", res.Findings, res.NotMeasurable)
	}
}
