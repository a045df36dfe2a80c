package ncclbw

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// TCP fallback signature: when NCCL finds no RDMA network (no libibverbs in
// the container, the OFI plugin not loaded, NCCL_IB_DISABLE=1) it moves
// inter-node traffic over TCP sockets. A multi-node run then shows small
// collectives taking tens of microseconds (kernel TCP stack round trips)
// and a busbw ceiling near what TCP gets out of one NIC (roughly 9-12 GB/s
// on 100-200 Gb/s links), far below the RDMA fabric.
const (
	tcpLatencyUS = 30   // small-message latency at or above this
	tcpCeiling   = 12.5 // GB/s: plateau at or below this (100 GbE line rate)
)

// rdmaNetwork says whether the log reports an RDMA network (IB, OFI, a plugin).
func rdmaNetwork(f *model.NCCLFacts) bool {
	n := strings.ToLower(f.Network)
	return f.OFIProvider != "" || strings.Contains(n, "ib") || strings.Contains(n, "ofi") || strings.Contains(n, "libfabric") ||
		(n != "" && !strings.Contains(n, "socket"))
}

// tcpFallback reports the TCP-socket signature of a multi-node run.
// When the sweep stops before the plateau (reached is false), the ceiling is
// unknown and a sign that RDMA was unavailable (NET/Socket, a libibverbs
// warning) must back the latency.
func tcpFallback(p *detectors.Pass, r *model.BenchRun, facts *model.NCCLFacts, small int64, plateau float64, reached bool, where string, ev []model.Evidence) {
	if r.Nodes < 2 || rdmaNetwork(facts) {
		return
	}
	lat, at := smallLatency(r, small)
	socket := strings.Contains(strings.ToLower(facts.Network), "socket")
	noVerbs := ""
	for _, w := range facts.Warnings {
		if strings.Contains(strings.ToLower(w), "libibverbs") {
			noVerbs = w
			break
		}
	}
	if lat < tcpLatencyUS || (reached && (plateau <= 0 || plateau > tcpCeiling)) || (!reached && !socket && noVerbs == "") {
		return
	}
	conf, how := model.Inferred, "the log does not say which network NCCL used"
	switch {
	case socket:
		conf, how = model.Measured, fmt.Sprintf("NCCL reports \"Using network %s\"", facts.Network)
	case noVerbs != "":
		how = fmt.Sprintf("NCCL warned %q, so it had no InfiniBand/RoCE verbs", noVerbs)
	}
	ceiling := fmt.Sprintf("a %.2f GB/s ceiling", plateau)
	if !reached {
		ceiling = "a sweep too short to show the ceiling"
	}
	p.Report(model.Finding{
		Severity:   model.SevWarning,
		Confidence: conf,
		Title:      fmt.Sprintf("TCP-socket fallback signature: %.0f us small-message latency and %s across %d nodes", lat, ceiling, r.Nodes),
		Message: fmt.Sprintf("%s: across %d nodes the fastest %s of <= %s takes %.1f us (at %s), with %s (busbw plateau %.2f GB/s); %s. Tens of microseconds per small collective and a ceiling near one NIC's TCP rate are what NCCL's socket transport gives, not an RDMA fabric (InfiniBand, RoCE, EFA or Slingshot reach a few microseconds and tens of GB/s).",
			where, r.Nodes, r.Collective, sizeStr(small), lat, sizeStr(at), ceiling, plateau, how),
		Recommendation: "Make NCCL use the RDMA network: with NCCL_DEBUG=INFO look for NET/IB or NET/OFI instead of NET/Socket; install rdma-core/libibverbs in the container and expose /dev/infiniband (IB/RoCE, check NCCL_IB_HCA and NCCL_IB_DISABLE), or load the aws-ofi-nccl plugin for EFA and HPE Slingshot (NCCL_NET=\"AWS Libfabric\", FI_PROVIDER=efa or cxi, plugin on LD_LIBRARY_PATH).",
		Metrics: []model.Metric{
			{Name: "small_latency", Value: lat, Unit: "us"},
			{Name: "plateau_busbw", Value: plateau, Unit: "GB/s"},
			{Name: "nodes", Value: float64(r.Nodes), Unit: "count"},
		},
		Evidence: ev,
	})
}

// smallLatency returns the fastest time of rows up to small bytes (-1 when none).
func smallLatency(r *model.BenchRun, small int64) (best float64, at int64) {
	best = -1
	for _, row := range r.Rows {
		if row.SizeBytes > small || row.SizeBytes == 0 {
			continue
		}
		for _, h := range []model.BenchResult{row.OutOfPlace, row.InPlace} {
			if h.Present && h.TimeUS > 0 && (best < 0 || h.TimeUS < best) {
				best, at = h.TimeUS, row.SizeBytes
			}
		}
	}
	return best, at
}

// crayHost matches HPE Cray EX node names (cabinet, chassis, slot, board,
// node: x3006c0s1b1n0), whose machines use the Slingshot interconnect.
var crayHost = regexp.MustCompile(`^x\d{4}c\d+s\d+b\d+n\d+$`)

// slingshotHosts says whether every host of the run has a Cray EX name.
func slingshotHosts(hosts []string) bool {
	for _, h := range hosts {
		if !crayHost.MatchString(h) {
			return false
		}
	}
	return len(hosts) > 0
}
