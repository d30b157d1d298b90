// Package prereq lets a test that needs something beyond Go modules (the
// npm artifacts the EVM tests deploy, redis-server) check for it itself:
// when it is missing the test skips with a message naming what is missing
// and how to get it, and every other test of its package still runs. So
// `go test ./...` in a fresh clone runs every package, and a developer who
// changes a decoder needs neither Node nor Redis to run its tests.
//
// CI must not skip unseen: with CLAMM_TEST_REQUIRE_ALL=1 in the
// environment (.ci/run sets it) a missing prerequisite fails the test
// instead of skipping it.
package prereq

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireAll is the environment variable that turns every skip for a
// missing prerequisite into a failure.
const RequireAll = "CLAMM_TEST_REQUIRE_ALL"

// Setup is what installs every prerequisite.
const Setup = "scripts/test-setup.sh"

// Need skips t (fails it under RequireAll) when err, the outcome of
// checking for what, is not nil. The message names what and the set-up
// script.
func Need(t testing.TB, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("needs %s: %v (run %s)", what, err, Setup)
	if os.Getenv(RequireAll) != "" {
		t.Fatalf("%s; %s is set, so a missing prerequisite fails", msg, RequireAll)
	}
	t.Skip("skipped: " + msg)
}

// Programs skips t (fails it under RequireAll) unless every named program
// is on PATH.
func Programs(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, err := exec.LookPath(name); err != nil {
			Need(t, name, errors.New("not on PATH"))
		}
	}
}
