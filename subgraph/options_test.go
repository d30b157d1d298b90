package subgraph_test

import (
	"strings"
	"testing"
	"time"

	"github.com/clamm-gateway/clamm-gateway/subgraph"
)

// New refuses a missing bound, naming it, instead of choosing one.
func TestNewRefusesZeroBounds(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]subgraph.Options{
		"Timeout":  {MaxBytes: 1 << 20},
		"MaxBytes": {Timeout: time.Second},
	} {
		if c, err := subgraph.New("http://sg.invalid", opts); c != nil || err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("zero %s: %v, %v", name, c, err)
		}
	}
	if _, err := subgraph.New("http://sg.invalid", subgraph.Options{Timeout: time.Second, MaxBytes: 1 << 20}); err != nil {
		t.Error(err)
	}
}
