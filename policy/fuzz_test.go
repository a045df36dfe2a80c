package policy

import (
	"strings"
	"testing"
)

// FuzzParse: no policy text makes Parse or Evaluate panic; errors name the
// file; accepted gates always have a metric and a limit.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("rules:\n  kernel-gap:\n    parms: {a: 1}\n"))
	f.Add([]byte("gates:\n  - metric: gpu.idle_pct\n    min: 5\n    max: 1\n"))
	f.Add([]byte("disabled: [a, b]\nrules: {a: {enabled: true}}\n"))
	f.Add([]byte("version: 1\ngates: [{metric: findings.error, max: 0, optional: true}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.yaml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, g := range p.Gates {
			if g.Metric == "" || (g.Min == nil && g.Max == nil) {
				t.Fatalf("accepted gate without metric or limit: %+v", g)
			}
		}
		_ = p.DetectorConfig()
		_ = p.Evaluate(testReport())
	})
}
