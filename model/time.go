package model

import (
	"fmt"
	"strconv"
)

// Time is a point on a trace's clock in nanoseconds. Kineto traces use Unix
// epoch nanoseconds; Nsight Systems exports use session-relative nanoseconds
// (see Clock for how to place them on the epoch).
type Time int64

// Duration is a length of time in nanoseconds.
type Duration int64

// Common durations.
const (
	Nanosecond  Duration = 1
	Microsecond          = 1000 * Nanosecond
	Millisecond          = 1000 * Microsecond
	Second               = 1000 * Millisecond
)

// Sub returns t-u.
func (t Time) Sub(u Time) Duration { return Duration(t - u) }

// Add returns t+d.
func (t Time) Add(d Duration) Time { return t + Time(d) }

// Micros returns d in microseconds as a float.
func (d Duration) Micros() float64 { return float64(d) / 1e3 }

// Millis returns d in milliseconds as a float.
func (d Duration) Millis() float64 { return float64(d) / 1e6 }

// Seconds returns d in seconds as a float.
func (d Duration) Seconds() float64 { return float64(d) / 1e9 }

// String formats d with a unit chosen by magnitude and fixed precision, so that
// the same value always prints the same way.
func (d Duration) String() string {
	a := d
	if a < 0 {
		a = -a
	}
	switch {
	case a < Microsecond:
		return strconv.FormatInt(int64(d), 10) + "ns"
	case a < Millisecond:
		return fmt.Sprintf("%.1fµs", d.Micros())
	case a < Second:
		return fmt.Sprintf("%.2fms", d.Millis())
	default:
		return fmt.Sprintf("%.3fs", d.Seconds())
	}
}

// Clock says how a trace's Time values relate to wall-clock time.
type Clock struct {
	// Origin is the Unix epoch nanosecond that Time 0 corresponds to. For
	// traces whose times are already epoch nanoseconds it is 0 and EpochKnown
	// is true.
	Origin Time
	// EpochKnown reports whether Origin (and so absolute placement) is known.
	EpochKnown bool
}

// Epoch converts t to Unix epoch nanoseconds; ok is false if the clock's
// origin is unknown.
func (c Clock) Epoch(t Time) (Time, bool) {
	return c.Origin + t, c.EpochKnown
}

// Interval is a half-open time window [Start, End).
type Interval struct {
	Start, End Time
}

// Len returns the interval's length, or 0 for an empty or inverted interval.
func (iv Interval) Len() Duration {
	if iv.End <= iv.Start {
		return 0
	}
	return Duration(iv.End - iv.Start)
}
