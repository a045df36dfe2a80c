package model

import (
	"reflect"
	"testing"
)

// TestHostSets: hosts with the same set (in any order, with repeats) share an
// entry; names and hosts are sorted; a host without names is the empty set.
func TestHostSets(t *testing.T) {
	got := HostSets(map[string][]string{
		"node-c": {"mlx5_1", "mlx5_0", "mlx5_1"},
		"node-a": {"mlx5_0", "mlx5_1"},
		"node-b": {"mlx5_2"},
		"node-d": nil,
	}, ",")
	want := []string{" on node-d", "mlx5_0,mlx5_1 on node-a, node-c", "mlx5_2 on node-b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("HostSets = %q, want %q", got, want)
	}
	if got := HostSets(map[string][]string{"a": {"x"}, "b": {"x"}}, " "); len(got) != 1 {
		t.Errorf("one set for equal hosts, got %q", got)
	}
}
