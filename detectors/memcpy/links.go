package memcpy

import (
	"strings"

	"github.com/tracedx/tracedx/model"
)

// Practical one-direction bandwidths, in GB/s (1e9 bytes per second), of a
// x16 host link: what pinned cudaMemcpyAsync reaches on a healthy system,
// not the spec sheet's raw rate.
const (
	pcieGen3  = 12.0
	pcieGen4  = 25.0
	pcieGen5  = 50.0
	nvlinkC2C = 400.0 // Grace-Hopper / Grace-Blackwell host link
)

// gpuSpec is what a GPU model's host link and device memory should give.
type gpuSpec struct {
	match   string  // upper-case substring of the device name
	hostGBs float64 // practical host link bandwidth per direction
	memGBs  float64 // device memory bandwidth (spec)
}

// gpuSpecs is matched in order, so that more specific names come first
// ("GH200" before "H200", "A100" before "A10", "L40S" before "L4").
var gpuSpecs = []gpuSpec{
	{"GB200", nvlinkC2C, 8000},
	{"GH200", nvlinkC2C, 4000},
	{"B200", pcieGen5, 8000},
	{"B100", pcieGen5, 8000},
	{"H200", pcieGen5, 4800},
	{"H100 PCIE", pcieGen5, 2000},
	{"H100 NVL", pcieGen5, 3900},
	{"H100", pcieGen5, 3350},
	{"H800", pcieGen5, 3350},
	{"H20", pcieGen5, 4000},
	{"A100", pcieGen4, 1555},
	{"A800", pcieGen4, 1555},
	{"A10G", pcieGen4, 600},
	{"A10", pcieGen4, 600},
	{"A30", pcieGen4, 933},
	{"A40", pcieGen4, 696},
	{"L40S", pcieGen4, 864},
	{"L40", pcieGen4, 864},
	{"L4", pcieGen4, 300},
	{"RTX 5090", pcieGen5, 1792},
	{"RTX 4090", pcieGen4, 1008},
	{"RTX 3090", pcieGen4, 936},
	{"RTX 6000 ADA", pcieGen4, 960},
	{"RTX A6000", pcieGen4, 768},
	{"V100", pcieGen3, 900},
	{"T4", pcieGen3, 320},
	{"P100", pcieGen3, 732},
	{"MI300X", pcieGen5, 5300},
	{"MI250X", pcieGen4, 3277},
	{"MI250", pcieGen4, 3277},
	{"MI210", pcieGen4, 1638},
}

// expected returns the host link and device memory bandwidths (GB/s) to
// expect on device d: the device's own memory bandwidth when the capture
// records it, else the table by name. A GPU the table does not know is
// assumed to sit on PCIe Gen3 (the lowest current link, so that the check
// errs towards quiet) with unknown memory bandwidth (0).
func expected(t *model.Trace, d model.DeviceID) (hostGBs, memGBs float64, known bool) {
	dev, ok := t.Device(d)
	hostGBs = pcieGen3
	if ok {
		name := strings.ToUpper(dev.Name)
		for _, s := range gpuSpecs {
			if strings.Contains(name, s.match) {
				hostGBs, memGBs, known = s.hostGBs, s.memGBs, true
				break
			}
		}
		if dev.MemoryBandwidth > 0 {
			memGBs = dev.MemoryBandwidth / 1e9
		}
	}
	return hostGBs, memGBs, known
}
