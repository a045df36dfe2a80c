package detectors

import "strings"

// virtualIfPrefixes start the names of interfaces that are not a host's
// real network: libvirt, docker (docker0, docker_gwbridge) and CNI bridges
// (br-…, cni0, cni-podman0), veth pairs, overlay and tunnel devices
// (flannel.1, cali…, tun0, tunl0, tap0, vxlan.calico).
var virtualIfPrefixes = []string{"virbr", "docker", "veth", "br-", "cni", "flannel", "cali", "tun", "tap", "vxlan"}

// VirtualInterface reports whether the network interface name (an alias
// such as "eth0:1" counts as its interface) is loopback or virtual: NCCL
// traffic over it does not reach other hosts, or takes a slow detour.
// nccl-transport and collective-timeout share it so that they name the same
// interfaces.
func VirtualInterface(name string) bool {
	name, _, _ = strings.Cut(name, ":")
	if name == "lo" {
		return true
	}
	for _, p := range virtualIfPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
