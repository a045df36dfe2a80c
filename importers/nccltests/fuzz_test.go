package nccltests

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracedx/tracedx/importers"
)

// FuzzParse feeds arbitrary text to the parser: it must never panic or hang,
// and whatever it returns must validate and dump.
func FuzzParse(f *testing.F) {
	for _, mk := range fixtures {
		text := mk()
		if len(text) > 4096 {
			text = text[:4096]
		}
		f.Add(text)
	}
	// Per-host devices: mpirun tags, Bootstrap and a virtual interface.
	f.Add("[1,0]<stdout>:node-a:1:1 [0] NCCL INFO Bootstrap : Using virbr0:192.168.122.1<0>\n" +
		"node-b:2:2 [0] NCCL INFO NET/IB : Using [0]mlx5_1:1/IB ; OOB eth0:10.0.0.2<0>\n:x:1:1 [0] NCCL INFO NET/IB : Using \n")
	f.Fuzz(func(t *testing.T, in string) {
		tr, err := Parse(strings.NewReader(in), "fuzz", importers.Options{MaxWarnings: 50})
		if err != nil {
			if !importers.IsInputError(err) {
				t.Fatalf("non-input error: %v", err)
			}
			return
		}
		if err := tr.Validate(); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := tr.Dump(&buf); err != nil {
			t.Fatal(err)
		}
	})
}
