package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
)

// TestMain stops at once, in one line, when what these tests need beyond
// Go modules is missing, instead of failing test by test.
func TestMain(m *testing.M) {
	for _, check := range []func() error{redistest.Prerequisites} {
		if err := check(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}
