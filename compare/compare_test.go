package compare

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/model"
)

func TestFindingKey(t *testing.T) {
	a := model.Finding{Rule: "kernel-gap", Title: "rank 0 device 0 idle 12.5% of the span in 3 gaps > 50.0µs"}
	b := model.Finding{Rule: "kernel-gap", Title: "rank 0 device 0 idle 40.1% of the span in 9 gaps > 50.0µs"}
	if findingKey(&a) != findingKey(&b) {
		t.Error("titles differing only in numbers do not match")
	}
	b.Severity = model.SevError
	added, resolved, changed := findingChanges([]model.Finding{a, {Rule: "memcpy", Title: "pageable copies"}}, []model.Finding{b, b})
	if len(added) != 1 || len(resolved) != 1 || resolved[0].Rule != "memcpy" {
		t.Errorf("added %v resolved %v", added, resolved)
	}
	if len(changed) != 1 || changed[0].From != model.SevInfo || changed[0].To != model.SevError {
		t.Errorf("changed %v", changed)
	}
}

func TestDevicePairing(t *testing.T) {
	ds := func(keys ...[2]int) []model.DeviceSummary {
		var out []model.DeviceSummary
		for _, k := range keys {
			out = append(out, model.DeviceSummary{Rank: k[0], Device: model.DeviceID(k[1]), Busy: model.Duration(k[0]*10 + k[1])})
		}
		return out
	}
	// Same keys: by key.
	got := deviceDeltas(ds([2]int{1, 1}, [2]int{0, 0}), ds([2]int{0, 0}, [2]int{1, 1}))
	if len(got) != 2 || got[0].Paired || got[1].Cand.Busy != 11 {
		t.Errorf("same keys: %+v", got)
	}
	// Same count, other keys: paired in order.
	got = deviceDeltas(ds([2]int{0, 0}, [2]int{1, 1}), ds([2]int{2, 2}, [2]int{3, 3}))
	if len(got) != 2 || !got[0].Paired || got[0].Cand.Device != 2 || got[1].Cand.Rank != 3 {
		t.Errorf("paired: %+v", got)
	}
	// Different counts: merged by key.
	got = deviceDeltas(ds([2]int{0, 0}, [2]int{0, 5}), ds([2]int{0, 3}))
	var keys []string
	for _, d := range got {
		keys = append(keys, fmt.Sprintf("%d/%v/%v", d.Device, d.InBase, d.InCan))
	}
	if strings.Join(keys, " ") != "0/true/false 3/false/true 5/true/false" {
		t.Errorf("merged: %v", keys)
	}
}
