package pipeline

import (
	"fmt"

	"github.com/tracedx/tracedx/export"
	"github.com/tracedx/tracedx/model"
)

// MaxWarningBytes bounds a warning's position and message: an input can put
// anything in them (a 20-million-digit timestamp made a 20 MB warning line).
const MaxWarningBytes = 1024

// DefaultMaxWarnings is the number of warnings kept per file when
// importers.Options.MaxWarnings is not set.
const DefaultMaxWarnings = 1000

// capWarnings is the one place every import warning passes through before a
// report or the terminal sees it: at most max warnings per file (the rest
// counted in a last one) and each at most MaxWarningBytes long. Importers
// that cap on their own (importers.Warner) pass through unchanged.
func capWarnings(t *model.Trace, max int) {
	if max <= 0 {
		max = DefaultMaxWarnings
	}
	if n := len(t.Warnings); n > max+1 { // +1: an importers.Warner summary line
		t.Warnings = append(t.Warnings[:max:max], model.Warning{File: t.Path, Position: "-",
			Message: fmt.Sprintf("%d more warnings not shown", n-max)})
	}
	for i := range t.Warnings {
		w := &t.Warnings[i]
		w.Position = export.ShortenName(w.Position, MaxWarningBytes)
		w.Message = export.ShortenName(w.Message, MaxWarningBytes)
		w.File = export.ShortenName(w.File, MaxWarningBytes)
	}
}
