package nccltransport

import (
	"fmt"
	"strings"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// ifName returns the interface of one "Socket: [0]eth0:10.0.0.1<0>" /
// "Bootstrap: eth0:10.0.0.1<0>" entry, one per listed device.
func ifNames(dev string) []string {
	_, list, _ := strings.Cut(dev, ": ")
	var out []string
	for _, part := range strings.Fields(list) {
		if i := strings.IndexByte(part, ']'); i >= 0 {
			part = part[i+1:]
		}
		name, _, _ := strings.Cut(part, ":")
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// devices checks the network devices NCCL listed: different HCAs on
// different hosts, and virtual or loopback interfaces used for sockets or
// bootstrap.
func devices(p *detectors.Pass, f *model.NCCLFacts, name string, ev []model.Evidence) {
	var virtual []string
	for _, d := range f.NetDevices {
		switch {
		case strings.HasPrefix(d, "Socket:"), strings.HasPrefix(d, "Bootstrap:"):
			for _, n := range ifNames(d) {
				if detectors.VirtualInterface(n) {
					virtual = append(virtual, d)
					break
				}
			}
		}
	}
	// HCAs per host: the union over the host's processes (a process per GPU
	// may list only its own rail).
	perHost := map[string][]string{}
	for _, hd := range f.HostNetDevices {
		host, d, ok := strings.Cut(hd, " ")
		if !ok || !strings.HasPrefix(d, "IB:") {
			continue
		}
		perHost[host] = append(perHost[host], ifNames(d)...)
	}
	if list := model.HostSets(perHost, ","); len(list) > 1 {
		p.Report(model.Finding{
			Severity:       model.SevWarning,
			Title:          "Hosts use different HCAs",
			Message:        fmt.Sprintf("%s: NCCL uses different InfiniBand/RoCE devices on different hosts (%s): hosts are cabled or configured differently, or NCCL_IB_HCA differs between them; rails that do not match across nodes cut inter-node bandwidth or fail to connect.", name, strings.Join(list, "; ")),
			Recommendation: "Set the same NCCL_IB_HCA on every host (e.g. =mlx5_0,mlx5_1 or =^mlx5_bond), check ibstat for down ports and that every node has the same NIC layout.",
			Metrics:        []model.Metric{{Name: "hca_sets", Value: float64(len(list)), Unit: "count"}},
			Evidence:       ev,
		})
	}
	if len(virtual) > 0 {
		p.Report(model.Finding{
			Severity:       model.SevWarning,
			Title:          "NCCL uses a virtual or loopback network interface",
			Message:        fmt.Sprintf("%s: NCCL chose %s: a loopback, bridge (virbr, docker), veth or tunnel interface does not reach other hosts (or takes a slow detour), so bootstrap or socket traffic may hang or crawl.", name, strings.Join(virtual, "; ")),
			Recommendation: "Set NCCL_SOCKET_IFNAME to the host's real interface (e.g. =eth0 or =^docker,lo,virbr) on every rank, the same for GLOO_SOCKET_IFNAME.",
			Metrics:        []model.Metric{{Name: "virtual_interfaces", Value: float64(len(virtual)), Unit: "count"}},
			Evidence:       ev,
		})
	}
}

// checkedNote says what an INFO log was checked for when nothing was found.
func checkedNote(p *detectors.Pass, f *model.NCCLFacts, name string, ev []model.Evidence) {
	if len(f.TransportUse) == 0 {
		p.Report(model.Finding{
			Severity:   model.SevInfo,
			Title:      "NCCL INFO lines stop before any connection was set up",
			Message:    fmt.Sprintf("%s: %d NCCL INFO lines (network %s) but no \"Channel ... via\" connection line: the log ends (or was cut) before NCCL connected its rings and trees, so the transports between GPUs and nodes could not be checked. Devices and interfaces were checked and look sound.", name, f.InfoLines, orDash(f.Network)),
			Metrics:    []model.Metric{{Name: "info_lines", Value: float64(f.InfoLines), Unit: "count"}},
			Evidence:   ev,
			Confidence: model.Measured,
		})
		return
	}
	p.Report(model.Finding{
		Severity:   model.SevInfo,
		Title:      "NCCL transport setup: nothing wrong in the INFO lines",
		Message:    fmt.Sprintf("%s: %d NCCL INFO lines (network %s; transports %s) were checked for a TCP-socket fallback between nodes, missing GPU peer-to-peer inside a node, GPUDirect RDMA off, NVLS/CollNet not engaged, different HCAs per host and virtual or loopback interfaces; none was found.", name, f.InfoLines, orDash(f.Network), orDash(strings.Join(f.Transports, ", "))),
		Metrics:    []model.Metric{{Name: "info_lines", Value: float64(f.InfoLines), Unit: "count"}},
		Evidence:   ev,
		Confidence: model.Measured,
	})
}
