package detectors

import (
	"reflect"
	"testing"

	"github.com/tracedx/tracedx/model"
)

func ivs(xs ...int64) []model.Interval {
	var out []model.Interval
	for i := 0; i+1 < len(xs); i += 2 {
		out = append(out, model.Interval{Start: model.Time(xs[i]), End: model.Time(xs[i+1])})
	}
	return out
}

func TestIntervals(t *testing.T) {
	u := Union(ivs(5, 10, 0, 3, 2, 4, 10, 12, 20, 20, 15, 18))
	if want := ivs(0, 4, 5, 12, 15, 18); !reflect.DeepEqual(u, want) {
		t.Fatalf("Union = %v, want %v", u, want)
	}
	if Total(u) != 4+7+3 {
		t.Errorf("Total = %d", Total(u))
	}
	if got, want := Intersect(u, ivs(3, 6, 11, 16)), ivs(3, 4, 5, 6, 11, 12, 15, 16); !reflect.DeepEqual(got, want) {
		t.Errorf("Intersect = %v, want %v", got, want)
	}
	if got, want := Subtract(u, ivs(3, 6, 11, 16)), ivs(0, 3, 6, 11, 16, 18); !reflect.DeepEqual(got, want) {
		t.Errorf("Subtract = %v, want %v", got, want)
	}
	if got, want := Gaps(u, 1), ivs(12, 15); !reflect.DeepEqual(got, want) {
		t.Errorf("Gaps = %v, want %v", got, want)
	}
	if got := Overlap(u, 2, 16); got != 2+7+1 {
		t.Errorf("Overlap = %d", got)
	}
}
