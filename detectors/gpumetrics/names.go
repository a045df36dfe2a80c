package gpumetrics

import "strings"

// kind is what a GPU metric measures.
type kind uint8

const (
	kNone kind = iota
	kSMActive
	kSMIssue
	kTensor
	kDRAMRead
	kDRAMWrite
	kPCIeRX
	kPCIeTX
	kNVLinkRX
	kNVLinkTX
	nKinds
)

var kindNames = [nKinds]string{"", "SMs active", "SM issue", "tensor active", "DRAM read", "DRAM write", "PCIe RX", "PCIe TX", "NVLink RX", "NVLink TX"}

// classify maps an nsys metric name to its kind. Names are matched without
// their unit suffix and case: nsys 2021.2–2022.x print bare names ("SM
// Active", "SM Issue", "Tensor Active", "DRAM Read Bandwidth", "PCIe Read
// Throughput"); 2022.4+ append the unit ("SMs Active [Throughput %]",
// "Tensor Active [Throughput %]", "DRAM Write Bandwidth [Throughput %]",
// "PCIe RX Throughput [Throughput %]", "NVLink TX Responses User Data
// [Throughput %]"), the set depending on the architecture (Turing
// TU10x, Ampere GA100/GA10x, Ada AD10x, Hopper GH100, Blackwell GB100: no
// NVLink metrics on parts without NVLink; Turing has "Tensor Active /
// FP16 Active"). Only throughput percentages are judged: counts such as
// "PCIe Read Requests to BAR1 [Requests]" and NVLink protocol-data metrics
// (link overhead, not payload) are ignored.
func classify(name, unit string) kind {
	if unit != "" && !strings.Contains(unit, "%") {
		return kNone
	}
	n := strings.ToLower(strings.TrimSpace(name))
	if i := strings.IndexByte(n, '['); i >= 0 {
		n = strings.TrimSpace(n[:i])
	}
	switch {
	case n == "sms active" || n == "sm active":
		return kSMActive
	case n == "sm issue" || n == "sm issue active":
		return kSMIssue
	case strings.HasPrefix(n, "tensor active") || n == "tensor pipe active":
		return kTensor
	case strings.HasPrefix(n, "dram read"):
		return kDRAMRead
	case strings.HasPrefix(n, "dram write"):
		return kDRAMWrite
	case strings.HasPrefix(n, "pcie rx") || n == "pcie read throughput":
		return kPCIeRX
	case strings.HasPrefix(n, "pcie tx") || n == "pcie write throughput":
		return kPCIeTX
	case strings.HasPrefix(n, "nvlink rx") && !strings.Contains(n, "protocol"):
		return kNVLinkRX
	case strings.HasPrefix(n, "nvlink tx") && !strings.Contains(n, "protocol"):
		return kNVLinkTX
	}
	return kNone
}
