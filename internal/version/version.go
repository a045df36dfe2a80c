// Package version holds tracedx's version, set at build time with
// -ldflags "-X github.com/tracedx/tracedx/internal/version.Version=v1.2.3".
package version

// Name is the tool's name as reports print it.
const Name = "tracedx"

// Version is the release version ("dev" for builds from a checkout).
var Version = "0.1.0-dev"
