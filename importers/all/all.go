// Package all is the explicit registry of every importer tracedx ships.
package all

import (
	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/importers/joblog"
	"github.com/tracedx/tracedx/importers/kineto"
	"github.com/tracedx/tracedx/importers/nccltests"
	"github.com/tracedx/tracedx/importers/nsys"
)

// Registry returns the default importer registry. Each importer package adds
// itself to the list below (one line each).
func Registry() *importers.Registry {
	return importers.NewRegistry(
		// importers: one line each, e.g. kineto.New(),
		nsys.New(),
		kineto.New(),
		nccltests.New(),
		joblog.New(),
	)
}
