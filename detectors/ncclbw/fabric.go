package ncclbw

import "strings"

// Link is a reference link rate: what one GPU can move in one direction.
type Link struct {
	Name string
	// GBps is per GPU and per direction, in GB/s (1e9 bytes/s), the unit of
	// nccl-tests busbw.
	GBps float64
	// Mesh is true for a full mesh of point-to-point links (AMD Infinity
	// Fabric): a GPU's reachable bandwidth is GBps per peer times its peers
	// on the node.
	Mesh   bool
	Source string
}

// GPUFabric says which links a GPU model has.
type GPUFabric struct {
	// Match is a lower-case substring of the GPU name as nccl-tests prints
	// it (cudaDeviceProp.name); the first entry that matches wins, so more
	// specific names come first.
	Match string
	// Intra is the Links key of the GPU-to-GPU link inside a node ("" = none).
	Intra string
	// NIC is the Links key of the network rate per GPU assumed when the log
	// does not say which network ran (the platform's usual NIC).
	NIC string
}

// Table is the reference the detector compares against. It is never
// modified: each run builds its own with DefaultTable, and a user who knows
// better sets the expected_gbps parameter.
type Table struct {
	Links map[string]Link
	GPUs  []GPUFabric
}

// DefaultTable returns the built-in reference table. Sources are those of
// research/nccl-logs.md §6: stas00/ml-engineering network/README.md (commit
// 744d01e) for NVLink generations, PCIe and InfiniBand rates; NVIDIA's NVLink
// page for NVLink4; the PCIe specification for Gen3; aws-samples/aws-efa-eks
// for p4d EFA; AMD figures for Infinity Fabric as quoted by stas00.
func DefaultTable() Table {
	return Table{
		Links: map[string]Link{
			"nvlink1":      {Name: "NVLink 1 (P100)", GBps: 80, Source: "NVIDIA P100 whitepaper: 160 GB/s bidirectional"},
			"nvlink2":      {Name: "NVLink 2 (V100)", GBps: 150, Source: "stas00/ml-engineering network/README.md: 300 GB/s duplex"},
			"nvlink3":      {Name: "NVLink 3 (A100)", GBps: 300, Source: "stas00/ml-engineering network/README.md: 600 GB/s duplex"},
			"nvlink3-800":  {Name: "NVLink 3 (A800, 400 GB/s duplex)", GBps: 200, Source: "NVIDIA A800 datasheet: 400 GB/s NVLink"},
			"nvlink4":      {Name: "NVLink 4 (H100/H200)", GBps: 450, Source: "stas00/ml-engineering network/README.md; nvidia.com/en-us/data-center/nvlink: 900 GB/s duplex"},
			"nvlink4-800":  {Name: "NVLink 4 (H800, 400 GB/s duplex)", GBps: 200, Source: "NVIDIA H800 datasheet: 400 GB/s NVLink"},
			"nvlink4-nvl":  {Name: "NVLink bridge (H100 NVL pairs)", GBps: 300, Source: "NVIDIA H100 NVL datasheet: 600 GB/s NVLink bridge"},
			"nvlink5":      {Name: "NVLink 5 (B200/GB200)", GBps: 900, Source: "stas00/ml-engineering network/README.md: 1800 GB/s duplex"},
			"pcie3":        {Name: "PCIe Gen3 x16", GBps: 15.75, Source: "PCIe 3.0 spec: 8 GT/s x16, 128b/130b"},
			"pcie4":        {Name: "PCIe Gen4 x16", GBps: 31.5, Source: "stas00/ml-engineering PCIe table"},
			"pcie5":        {Name: "PCIe Gen5 x16", GBps: 63, Source: "stas00/ml-engineering PCIe table"},
			"pcie6":        {Name: "PCIe Gen6 x16", GBps: 121, Source: "PCIe 6.0 spec: 64 GT/s x16, FLIT mode"},
			"xgmi-mi300":   {Name: "Infinity Fabric (MI300X/MI325X)", GBps: 64, Mesh: true, Source: "stas00/ml-engineering: 64 GB/s GPU-to-GPU, 448 GB/s total per GPU"},
			"xgmi-mi250":   {Name: "Infinity Fabric (MI250)", GBps: 50, Mesh: true, Source: "AMD CDNA2 whitepaper: 100 GB/s bidirectional per link (unverified per-peer count)"},
			"ib-edr":       {Name: "InfiniBand EDR 100 Gb/s per GPU", GBps: 12.5, Source: "stas00/ml-engineering InfiniBand table (IBTA)"},
			"ib-hdr":       {Name: "InfiniBand HDR 200 Gb/s per GPU", GBps: 25, Source: "stas00/ml-engineering InfiniBand table (IBTA)"},
			"ib-ndr":       {Name: "InfiniBand NDR 400 Gb/s per GPU", GBps: 50, Source: "stas00/ml-engineering InfiniBand table; NVIDIA NDR cabling guide"},
			"ib-xdr":       {Name: "InfiniBand XDR 800 Gb/s per GPU", GBps: 100, Source: "stas00/ml-engineering InfiniBand table (IBTA)"},
			"roce-200":     {Name: "RoCE 200 Gb/s per GPU", GBps: 25, Source: "Ethernet line rate"},
			"roce-400":     {Name: "RoCE 400 Gb/s per GPU", GBps: 50, Source: "Ethernet line rate (ConnectX-7 / BlueField-3 400GbE)"},
			"efa-p4d":      {Name: "AWS EFA v1 (p4d: 4x100 Gb/s per 8 GPUs)", GBps: 6.25, Source: "aws-samples/aws-efa-eks README: 4x100 Gbps EFA"},
			"efa-p5":       {Name: "AWS EFA v2 (p5: 3200 Gb/s per 8 GPUs)", GBps: 50, Source: "stas00/ml-engineering: 3200 Gb/s per node"},
			"efa-p6":       {Name: "AWS EFA v3/v4 (P6-B200: 3200 Gb/s per 8 GPUs)", GBps: 50, Source: "stas00/ml-engineering: 8x 50 GBps EFA"},
			"slingshot-11": {Name: "HPE Slingshot 11 200 Gb/s per GPU", GBps: 25, Source: "Slingshot 11 NIC line rate (200 Gb/s)"},
		},
		GPUs: []GPUFabric{
			{Match: "gb300", Intra: "nvlink5", NIC: "ib-xdr"},
			{Match: "gb200", Intra: "nvlink5", NIC: "ib-xdr"},
			{Match: "b300", Intra: "nvlink5", NIC: "ib-ndr"},
			{Match: "b200", Intra: "nvlink5", NIC: "ib-ndr"},
			{Match: "gb10", Intra: "", NIC: "roce-200"},
			{Match: "gh200", Intra: "nvlink4", NIC: "ib-ndr"},
			{Match: "h200", Intra: "nvlink4", NIC: "ib-ndr"},
			{Match: "h800", Intra: "nvlink4-800", NIC: "ib-ndr"},
			{Match: "h100 nvl", Intra: "nvlink4-nvl", NIC: "ib-ndr"},
			{Match: "h100 pcie", Intra: "pcie5", NIC: "ib-ndr"},
			{Match: "h100", Intra: "nvlink4", NIC: "ib-ndr"},
			{Match: "a800", Intra: "nvlink3-800", NIC: "ib-hdr"},
			{Match: "a100-pcie", Intra: "pcie4", NIC: "ib-hdr"},
			{Match: "a100 pcie", Intra: "pcie4", NIC: "ib-hdr"},
			{Match: "a100", Intra: "nvlink3", NIC: "ib-hdr"},
			{Match: "v100-pcie", Intra: "pcie3", NIC: "ib-edr"},
			{Match: "v100", Intra: "nvlink2", NIC: "ib-edr"},
			{Match: "p100-sxm", Intra: "nvlink1", NIC: "ib-edr"},
			{Match: "p100", Intra: "pcie3", NIC: "ib-edr"},
			{Match: "mi300", Intra: "xgmi-mi300", NIC: "ib-ndr"},
			{Match: "mi325", Intra: "xgmi-mi300", NIC: "ib-ndr"},
			{Match: "mi250", Intra: "xgmi-mi250", NIC: "ib-hdr"},
			{Match: "rtx 50", Intra: "pcie5", NIC: ""},
			{Match: "rtx pro 6000", Intra: "pcie5", NIC: ""},
			{Match: "rtx 40", Intra: "pcie4", NIC: ""},
			{Match: "l40", Intra: "pcie4", NIC: "roce-200"},
			{Match: "l4", Intra: "pcie4", NIC: ""},
			{Match: "ada", Intra: "pcie4", NIC: ""},
			{Match: "rtx 30", Intra: "pcie4", NIC: ""},
			{Match: "a40", Intra: "pcie4", NIC: ""},
			{Match: "a10", Intra: "pcie4", NIC: ""},
			{Match: "rtx 20", Intra: "pcie3", NIC: ""},
			{Match: "titan", Intra: "pcie3", NIC: ""},
			{Match: "t4", Intra: "pcie3", NIC: ""},
			{Match: "gtx", Intra: "pcie3", NIC: ""},
		},
	}
}

// gpuFabric finds the entry for a GPU name.
func (t Table) gpuFabric(gpu string) (GPUFabric, bool) {
	g := strings.ToLower(gpu)
	for _, e := range t.GPUs {
		if strings.Contains(g, e.Match) {
			return e, true
		}
	}
	return GPUFabric{}, false
}

// nicFor picks the per-GPU network rate: from the network NCCL reported
// when the log has INFO lines, else the GPU platform's usual NIC. assumed is
// true when the network was not reported.
func (t Table) nicFor(gpu, network, ofi string, g GPUFabric) (key string, assumed bool) {
	n := strings.ToLower(network)
	gl := strings.ToLower(gpu)
	switch {
	case strings.Contains(n, "socket"):
		return "", false
	case ofi == "cxi":
		return "slingshot-11", false
	case ofi == "efa" || strings.Contains(n, "libfabric") || strings.Contains(n, "ofi"):
		switch {
		case strings.Contains(gl, "a100"):
			return "efa-p4d", false
		case strings.Contains(gl, "b200"):
			return "efa-p6", false
		}
		return "efa-p5", false
	}
	return g.NIC, network == ""
}
