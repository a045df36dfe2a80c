package policy

import (
	"fmt"
	"math"

	"github.com/tracedx/tracedx/detectors"
)

// maxNs bounds a time parameter once converted to nanoseconds: about 36
// years, far above any threshold, and far below int64's limit so that the
// rules' arithmetic (sums, doubling) cannot overflow.
const maxNs = 1 << 60

// nsPerUnit converts the time units the rules declare to nanoseconds.
var nsPerUnit = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}

// CheckParamValue rejects a value a rule parameter cannot take: NaN and
// infinities (a NaN duration became -9.2e18 ns), negative values (every
// threshold, fraction, count and size is non-negative) and times too large
// to convert to int64 nanoseconds. The message names the unit's range; the
// caller adds the flag or the policy line.
func CheckParamValue(p detectors.Param, v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%v is not a finite number", v)
	case v < 0:
		return fmt.Errorf("%s must not be negative", FormatValue(v))
	}
	if scale, ok := nsPerUnit[p.Unit]; ok && v*scale > maxNs {
		return fmt.Errorf("%s %s is out of range (at most %s %s)", FormatValue(v), p.Unit, FormatValue(maxNs/scale), p.Unit)
	}
	return nil
}

// checkLimit rejects a non-finite gate limit.
func checkLimit(v *float64) error {
	if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0)) {
		return fmt.Errorf("%v is not a finite number", *v)
	}
	return nil
}
