package detectors

import "testing"

func TestVirtualInterface(t *testing.T) {
	for _, n := range []string{"lo", "lo:1", "virbr0", "docker0", "docker_gwbridge", "br-1a2b3c", "veth12ab", "veth_x",
		"cni0", "cni-podman0", "flannel.1", "cali1234abcd", "tun0", "tunl0", "tap3", "vxlan.calico"} {
		if !VirtualInterface(n) {
			t.Errorf("%s: not virtual", n)
		}
	}
	for _, n := range []string{"eth0", "eth0:1", "ens5", "enp65s0f0", "eno1", "ib0", "bond0", "ibp12s0", "lo0x", "local0", "", "mlx5_0"} {
		if VirtualInterface(n) {
			t.Errorf("%s: virtual", n)
		}
	}
}
