package html

import "testing"

// TestDownsample: a long series keeps at most n points, in x order, with
// its global minimum and maximum (a single spike survives); a short one is
// kept as it is.
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
	if !hasMax || !hasMin {
		t.Errorf("spike kept %v, dip kept %v", hasMax, hasMin)
	}
	if short := downsample(pts[:50], 600); len(short) != 50 {
		t.Errorf("a 50-point series became %d points", len(short))
	}
}
