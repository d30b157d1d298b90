// Package prereq lets a test package stop at once, in one line, when what
// its tests need beyond Go modules (npm artifacts, the built subgraph,
// redis-server) is missing, instead of failing test by test with errors
// that do not say what to run. Each check names scripts/test-setup.sh.
package prereq

import (
	"fmt"
	"os"
	"testing"
)

// Main runs the package's tests after every check passes, from TestMain.
func Main(m *testing.M, checks ...func() error) {
	for _, check := range checks {
		if err := check(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}
