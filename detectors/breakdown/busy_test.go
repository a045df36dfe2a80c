package breakdown

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/model"
)

// TestBusyMatchesUnion checks the streaming union against Total(Union) on
// start-ordered lists with overlaps, touching and empty intervals.
func TestBusyMatchesUnion(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 200; n++ {
		ivs := make([]model.Interval, n)
		for i := range ivs {
			s := model.Time(r.Intn(1000))
			ivs[i] = model.Interval{Start: s, End: s + model.Time(r.Intn(40)) - 5}
		}
		slices.SortStableFunc(ivs, func(a, b model.Interval) int { return int(a.Start - b.Start) })
		var b busy
		for _, iv := range ivs {
			b.add(iv.Start, iv.End)
		}
		want := detectors.Total(detectors.Union(slices.Clone(ivs)))
		if got := b.total(); got != want {
			t.Fatalf("n=%d: busy %v, union %v", n, got, want)
		}
	}
}
