package detectortest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tracedx/tracedx/internal/corpus"
	"github.com/tracedx/tracedx/model"
)

// Importer is the Import method of importers.Importer; O is
// importers.Options, named by the caller because a package under detectors
// never depends on importers.
type Importer[O any] interface {
	Import(ctx context.Context, path string, opts O) (*model.Trace, error)
}

// CorpusTraces imports every trace of the shared corpus (corpus/nsys
// *.sqlite with nsysImp, corpus/kineto *.json and *.json.gz with kinetoImp)
// whose file name keep accepts, and hands it to f with that name. An import
// error fails the test. It returns how many traces it handed to f.
func CorpusTraces[O any](tb testing.TB, nsysImp, kinetoImp Importer[O], keep func(base string) bool, f func(base string, tr *model.Trace)) int {
	tb.Helper()
	n := 0
	for _, c := range []struct {
		dir  string
		imp  Importer[O]
		suff []string
	}{
		{"corpus/nsys", nsysImp, []string{".sqlite"}},
		{"corpus/kineto", kinetoImp, []string{".json", ".json.gz"}},
	} {
		for _, path := range corpus.Files(tb, c.dir, c.suff...) {
			base := filepath.Base(path)
			if !keep(base) {
				continue
			}
			n++
			var opts O
			tr, err := c.imp.Import(context.Background(), path, opts)
			if err != nil {
				tb.Fatalf("%s: %v", base, err)
			}
			f(base, tr)
		}
	}
	return n
}
