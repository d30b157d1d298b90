package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The served binary links no test package and no scenario: test packages
// bring test-only code and flags into production (net/http/httptest, for
// one, registers a -httptest.serve flag), and scenarios belong to the fakes,
// which only the demo generator and the tests use. A dependency that pulls
// one in (a recording library did) fails here, naming the package.
func TestServedBinaryLinksNoTestPackage(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if _, err := exec.LookPath(goTool); err != nil {
		t.Skipf("no go tool to list the binary's packages with (not on PATH, not at %s)", goTool)
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if testOnly(pkg) {
			t.Errorf("cmd/clamm-gateway links %s", pkg)
		}
	}
}

// testOnly reports whether an import path names test code: the testing
// package, a package in or under a folder whose name ends in "test"
// (internal/evmtest/pipeline too), anything in the test-support home
// internal/testenv, or a scenario package (a path element starting with
// "scenario"). internal/synctest is the one exception: package sync
// imports it. Another module's folder named testenv is its own business:
// SQLite's driver (github.com/ncruces/go-sqlite3/internal/testenv) keeps
// inert hooks for its tests there, which its production code imports.
func testOnly(pkg string) bool {
	if pkg == "internal/synctest" {
		return false
	}
	if pkg == "testing" || strings.HasPrefix(pkg, "testing/") {
		return true
	}
	for _, el := range strings.Split(pkg, "/") {
		ours := strings.HasPrefix(pkg, "github.com/clamm-gateway/clamm-gateway/")
		if strings.HasSuffix(el, "test") || el == "testenv" && ours || strings.HasPrefix(el, "scenario") {
			return true
		}
	}
	return false
}

func TestTestOnly(t *testing.T) {
	for pkg, want := range map[string]bool{
		"internal/synctest": false,
		"internal/testlog":  false, // os imports it; its name does not end in test
		"net/http/httptest": true,
		"testing":           true,
		"testing/iotest":    true,
		"os":                false,
		"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest":  true,
		"github.com/clamm-gateway/clamm-gateway/internal/testenv/scenario": true,
		"github.com/clamm-gateway/clamm-gateway/internal/replay":           false,
		"github.com/clamm-gateway/clamm-gateway/internal/scenarios":        true,
		"github.com/ncruces/go-sqlite3/internal/testenv":                   false,
		"github.com/clamm-gateway/clamm-gateway/internal/attestation":      false,
		"github.com/clamm-gateway/clamm-gateway/internal/evmtest/pipeline": true,
		"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq":   true,
	} {
		if got := testOnly(pkg); got != want {
			t.Errorf("testOnly(%q) = %v, want %v", pkg, got, want)
		}
	}
}
