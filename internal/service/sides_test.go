package service_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const servicePath = "github.com/clamm-gateway/clamm-gateway/internal/service"

// TestSidesMeetOnlyThroughVocab holds the seams docs/development.md states:
// a side (market, trade, liquidity) imports no other side and not the
// composing package, only vocab; vocab imports no use-case package at all.
// Go forbids only cycles, so a side leaning on its sibling would compile.
func TestSidesMeetOnlyThroughVocab(t *testing.T) {
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	sides := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "testdata" {
			continue
		}
		sides++
		for file, imp := range imports(t, d.Name()) {
			if !strings.HasPrefix(imp, servicePath) {
				continue
			}
			if d.Name() == "vocab" || imp != servicePath+"/vocab" {
				t.Errorf("%s imports %s: a side meets the others only through vocab", file, imp)
			}
		}
	}
	if sides < 4 {
		t.Fatalf("found %d packages under internal/service, want market, trade, liquidity and vocab", sides)
	}
}

// imports are the imports of a directory's non-test files, by file:path.
func imports(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			out[f+":"+p] = p
		}
	}
	return out
}

// TestUseCasesImportNoIndexEngine: the use cases and the HTTP layer know
// nothing of the Graph Node emulator or the index behind it (the
// indexer's status reaches readiness as vocab.Indexing, filled by
// internal/app), so the index can change engine without touching them.
func TestUseCasesImportNoIndexEngine(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	if _, err := exec.LookPath(goTool); err != nil {
		t.Skipf("no go tool to list the packages' imports with (not on PATH, not at %s)", goTool)
	}
	out, err := exec.Command(goTool, "list", "-deps", "./...", "../../gateway").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const engine = "github.com/clamm-gateway/clamm-gateway/internal/graphnode"
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == engine || strings.HasPrefix(pkg, engine+"/") {
			t.Errorf("internal/service or gateway imports %s", pkg)
		}
	}
}
