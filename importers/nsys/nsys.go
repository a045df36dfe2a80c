package nsys

import (
	"bytes"
	"context"
	"errors"

	"github.com/tracedx/tracedx/importers"
	"github.com/tracedx/tracedx/model"
)

type importer struct{}

// New returns the Nsight Systems SQLite export importer.
func New() importers.Importer { return importer{} }

func (importer) Format() model.Format { return model.FormatNsys }

// Sniff recognises the SQLite 3 file header.
func (importer) Sniff(head []byte) int {
	if bytes.HasPrefix(head, []byte(sqliteHeader)) {
		return 90
	}
	return 0
}

// Import reads an Nsight Systems SQLite export (nsys export --type sqlite).
// The file is opened read-only and immutable; it is never written.
func (importer) Import(ctx context.Context, path string, opts importers.Options) (*model.Trace, error) {
	d, err := openDB(path)
	if err != nil {
		return nil, asInputError(path, err)
	}
	defer d.close()
	t := model.NewTrace(path, model.FormatNsys)
	b := newBuilder(t, importers.NewWarner(t, opts))
	for _, w := range sidecarWarnings(path) {
		b.w.Warn("-", "%s", w)
	}
	r := &reader{d: d, b: b}
	if err := r.read(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, asInputError(path, err)
	}
	return b.finish(), nil
}

func asInputError(path string, err error) error {
	var ie *inputErr
	if errors.As(err, &ie) {
		return importers.Errorf(ie.file, ie.pos, "%v", ie.err)
	}
	if importers.IsInputError(err) {
		return err
	}
	return importers.Errorf(path, "", "%v", err)
}
