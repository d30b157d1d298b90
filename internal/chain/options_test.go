package chain

import (
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/config"
)

// newTestReader is NewReader with the default configuration's durations
// (the package's tests cannot import internal/testenv, which imports chain).
func newTestReader(t testing.TB, c Caller, multicall common.Address) *Reader {
	t.Helper()
	d := config.Default()
	r, err := NewReader(c, Options{Multicall3: multicall, CallTimeout: d.UpstreamTimeout.D(), ImmutablesTTL: d.ImmutablesTTL.D()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// NewReader refuses a missing duration, naming it, rather than choosing
// one of its own.
func TestNewReaderRefusesZeroDurations(t *testing.T) {
	for name, opts := range map[string]Options{
		"CallTimeout":   {ImmutablesTTL: time.Hour},
		"ImmutablesTTL": {CallTimeout: time.Second},
	} {
		if r, err := NewReader(nil, opts); r != nil || err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("zero %s: %v, %v", name, r, err)
		}
	}
	opts := Options{CallTimeout: -time.Second, ImmutablesTTL: time.Hour}
	if _, err := NewReader(nil, opts); err == nil {
		t.Error("negative CallTimeout accepted")
	}
}
