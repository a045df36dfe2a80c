// Package all is the explicit registry of every detector tracedx ships, in
// the order reports list them.
package all

import (
	"github.com/tracedx/tracedx/detectors"
	"github.com/tracedx/tracedx/detectors/attentionbackend"
	"github.com/tracedx/tracedx/detectors/collectivetimeout"
	"github.com/tracedx/tracedx/detectors/commwait"
	"github.com/tracedx/tracedx/detectors/cudagraph"
	"github.com/tracedx/tracedx/detectors/gilstall"
	"github.com/tracedx/tracedx/detectors/gpumetrics"
	"github.com/tracedx/tracedx/detectors/kernelgap"
	"github.com/tracedx/tracedx/detectors/launchoverhead"
	"github.com/tracedx/tracedx/detectors/memcpy"
	"github.com/tracedx/tracedx/detectors/memorypressure"
	"github.com/tracedx/tracedx/detectors/ncclbw"
	"github.com/tracedx/tracedx/detectors/ncclerrors"
	"github.com/tracedx/tracedx/detectors/nccltransport"
	"github.com/tracedx/tracedx/detectors/roofline"
	"github.com/tracedx/tracedx/detectors/servingthroughput"
	"github.com/tracedx/tracedx/detectors/specdecode"
	"github.com/tracedx/tracedx/detectors/steplatency"
	"github.com/tracedx/tracedx/detectors/syncapi"
	"github.com/tracedx/tracedx/detectors/tensorcore"
	"github.com/tracedx/tracedx/detectors/tracehealth"
)

// Detectors returns every detector, in report order. A new detector is one
// line in this list.
func Detectors() []*detectors.Detector {
	return []*detectors.Detector{
		tracehealth.Detector,
		kernelgap.Detector,
		launchoverhead.Detector,
		gilstall.Detector,
		syncapi.Detector,
		memcpy.Detector,
		commwait.Detector,
		ncclbw.Detector,
		nccltransport.Detector,
		ncclerrors.Detector,
		collectivetimeout.Detector,
		servingthroughput.Detector,
		memorypressure.Detector,
		gpumetrics.Detector,
		specdecode.Detector,
		steplatency.Detector,
		cudagraph.Detector,
		attentionbackend.Detector,
		tensorcore.Detector,
		roofline.Detector,
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
