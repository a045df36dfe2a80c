package detectors

import (
	"strings"
	"testing"
)

// TestAdviceFitsProducer: PyTorch idioms only for PyTorch.
func TestAdviceFitsProducer(t *testing.T) {
	torchWords := []string{"torch", ".item()", "pin_memory", "non_blocking", "DataLoader"}
	for p := Producer(0); p < numProducers; p++ {
		info := ProducerInfo{Producer: p}
		for name, s := range map[string]string{"launch": LaunchBoundAdvice(info), "sync": SyncAdvice(info), "copy": CopyAdvice(info)} {
			if s == "" {
				t.Errorf("%s advice for %s is empty", name, p)
			}
			hasTorch := false
			for _, w := range torchWords {
				hasTorch = hasTorch || strings.Contains(s, w)
			}
			if p == ProducerPyTorch && !hasTorch {
				t.Errorf("%s advice for PyTorch names no PyTorch idiom: %q", name, s)
			}
			if p != ProducerPyTorch && hasTorch {
				t.Errorf("%s advice for %s gives PyTorch idioms: %q", name, p, s)
			}
		}
	}
}
