// Package all is the explicit registry of every detector tracedx ships, in
// the order reports list them.
package all

import (
	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/commwait"
	"github.com/tracedx/tracedx/detectors/kernelgap"
	"github.com/tracedx/tracedx/detectors/tracehealth"
)

// Detectors returns every detector. Each detector package adds itself to the
// list below (one line each).
func Detectors() []*detectors.Detector {
	return []*detectors.Detector{
		tracehealth.Detector,
		kernelgap.Detector,
		commwait.Detector,
		// detectors: one line each, e.g. kernelgap.Detector,
	}
}

// ByID returns the detector with the given ID.
func ByID(id string) (*detectors.Detector, bool) {
	for _, d := range Detectors() {
		if d.ID == id {
			return d, true
		}
	}
	return nil, false
}
