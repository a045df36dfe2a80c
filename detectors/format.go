package detectors

import (
	"fmt"
	"math"
	"strings"

	"github.com/tracedx/tracedx/model"
)

// This file holds the number and name formatting that findings' messages
// share, so that every rule prints numbers and threads the same way.

// FormatFloat formats v with up to two decimals and no trailing zeros, so
// that messages are stable.
func FormatFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Pct returns 100*num/den, or 0 when den is 0.
func Pct(num, den float64) float64 {
	if den == 0 {
		return 0
	}
	return 100 * num / den
}

// Round2 rounds x to two decimals (half away from zero), for percentages in metrics.
func Round2(x float64) float64 { return math.Round(x*100) / 100 }

// RankPrefix returns "rank N " for a trace of a known rank, else "", to
// start a finding's title.
func RankPrefix(t *model.Trace) string {
	if t.Rank >= 0 {
		return fmt.Sprintf("rank %d ", t.Rank)
	}
	return ""
}

// DeviceLabel names a device as "device N (name)", or "device N" when the
// trace does not name it.
func DeviceLabel(t *model.Trace, dev model.DeviceID) string {
	if d, ok := t.Device(dev); ok && d.Name != "" {
		return fmt.Sprintf("device %d (%s)", dev, d.Name)
	}
	return fmt.Sprintf("device %d", dev)
}

// ThreadLabel names a thread as "pid/tid name" (name omitted when unknown).
func ThreadLabel(t *model.Trace, id model.ThreadID) string {
	th := t.Thread(id)
	if th.Name == "" {
		return fmt.Sprintf("%d/%d", th.PID, th.TID)
	}
	return fmt.Sprintf("%d/%d %s", th.PID, th.TID, th.Name)
}

// TID returns the OS thread id of id, or -1 for NoThread.
func TID(t *model.Trace, id model.ThreadID) int64 {
	if id == model.NoThread {
		return -1
	}
	return t.Thread(id).TID
}
