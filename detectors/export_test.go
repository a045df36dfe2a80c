package detectors

import "github.com/tracedx/tracedx/model"

// Starved returns the gaps of f in which the GPU went idle with an empty
// launch queue, as a sorted disjoint list: what the idle index keeps of a
// feed (newIdleIndex), for the feed tests.
func (f *Feed) Starved() []model.Interval {
	var out []model.Interval
	for _, g := range f.Gaps {
		if iv, ok := g.starved(); ok {
			out = append(out, iv)
		}
	}
	return out
}
