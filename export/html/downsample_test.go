package html

import (
	"math"
	"testing"
)

// TestDownsample: a long series keeps at most n points, in x order, with
// its first and last points and its global minimum and maximum (a single
// spike survives); a short one is kept as it is.
func TestDownsample(t *testing.T) {
	var pts []point
	for i := 0; i < 10007; i++ {
		pts = append(pts, point{float64(i), float64(i % 13)})
	}
	pts[4321].y, pts[777].y = 500, -3
	got := downsample(pts, 600)
	if len(got) > 600 || len(got) < 300 {
		t.Fatalf("%d points, want 300..600", len(got))
	}
	hasMax, hasMin := false, false
	for i, p := range got {
		if i > 0 && p.x <= got[i-1].x {
			t.Fatalf("point %d at x %v after x %v", i, p.x, got[i-1].x)
		}
		hasMax = hasMax || p.y == 500
		hasMin = hasMin || p.y == -3
	}
	if got[0] != pts[0] || got[len(got)-1] != pts[len(pts)-1] {
		t.Errorf("ends %v..%v, want %v..%v", got[0], got[len(got)-1], pts[0], pts[len(pts)-1])
	}
	if !hasMax || !hasMin {
		t.Errorf("spike kept %v, dip kept %v", hasMax, hasMin)
	}
	if short := downsample(pts[:50], 600); len(short) != 50 {
		t.Errorf("a 50-point series became %d points", len(short))
	}
}

// TestNiceTop: y axes end at 4 round steps above the maximum.
func TestNiceTop(t *testing.T) {
	for v, want := range map[float64]float64{96: 100, 100: 100, 241.6: 320, 1: 1, 0.3: 0.32, 8: 8, 9: 10, 2400: 2400, 2401: 3200, 17.3: 20} {
		if got := niceTop(v); math.Abs(got-want) > 1e-9 {
			t.Errorf("niceTop(%v) = %v, want %v", v, got, want)
		}
	}
}
