package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The configuration table in docs/configuration.md is the settings table's
// own: a setting added, renamed or given another default shows there, or
// this fails printing the table to paste.
func TestDocsTableIsTheSettingsTable(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- config-table:begin -->\n", "<!-- config-table:end -->"
	doc := string(raw)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/configuration.md has no %q ... %q markers", begin, end)
	}
	if got, want := doc[i+len(begin):j], DocsTable(); got != want {
		t.Errorf("docs/configuration.md's table differs from the settings table; it should read:\n%s", want)
	}
}

// Every CLAMM_ variable the code reads is in the table: a string literal
// naming one in any non-test Go file of the module is a setting or one of
// otherVariables (per-chain names with %d stand for <id>). The test support
// in internal/testenv is left out: its variables configure the tests
// (docs/development.md), not the gateway.
func TestEveryVariableIsInTheTable(t *testing.T) {
	t.Parallel()
	known := map[string]bool{}
	for _, s := range settings {
		known[s.env] = true
	}
	for _, o := range append(otherVariables.first, otherVariables.last...) {
		known[o.env] = true
	}
	name := regexp.MustCompile(`CLAMM_[A-Z0-9_%d{}<>id]*[A-Z0-9]`)
	found := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != "../.." ||
			path == filepath.Join("..", "..", "internal", "testenv") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, _ := strconv.Unquote(lit.Value)
			for _, m := range name.FindAllString(v, -1) {
				m = strings.NewReplacer("%d", "<id>", "{id}", "<id>").Replace(m)
				if m == "CLAMM_CHAIN_<id>" || strings.HasSuffix(m, "_") {
					continue // a prefix being built, not a name
				}
				found++
				if !known[m] {
					t.Errorf("%s names %s, which is not in the settings table (internal/config/settings.go)", path, m)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < len(settings) {
		t.Fatalf("found %d names in the code, fewer than the %d settings: the scan is broken", found, len(settings))
	}
}

// Each setting parses its own default, the defaults pass validation, and
// each file key and variable is used once.
func TestSettingsAreWellFormed(t *testing.T) {
	t.Parallel()
	if err := Default().Validate(); err != nil {
		t.Fatalf("the defaults are invalid: %v", err)
	}
	envs, keys := map[string]bool{}, map[string]bool{}
	for _, s := range settings {
		if envs[s.env] || (s.json != "" && keys[s.json]) {
			t.Errorf("%s (%s) is in the table twice", s.env, s.json)
		}
		envs[s.env], keys[s.json] = true, true
		if !strings.HasPrefix(s.env, "CLAMM_") || s.doc == "" {
			t.Errorf("%s: a setting needs a CLAMM_ name and a doc", s.env)
		}
	}
}

// A file key that names no setting is refused, not ignored: a misspelt key
// would otherwise leave the default in force without a word.
func TestUnknownFileKeyIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(`{"strikesTtl":"30s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(env(map[string]string{"CLAMM_CONFIG": path})); err == nil || !strings.Contains(err.Error(), "strikesTtl") {
		t.Fatalf("misspelt key: %v", err)
	}
}

// The variables run.go used to read itself come through the table.
func TestProcessSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := Load(env(map[string]string{"CLAMM_LOG_LEVEL": "warn", "CLAMM_DEMO": "off", "CLAMM_QUERIES_DIR": dir, "CLAMM_PPROF_LISTEN": "127.0.0.1:6060"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.LogLevel.String() != "WARN" || c.Demo || c.QueriesDir != dir || c.PprofListen != "127.0.0.1:6060" {
		t.Fatalf("%+v", c)
	}
	if d := Default(); !d.Demo || d.LogLevel.String() != "INFO" {
		t.Fatalf("defaults: demo %v level %s", d.Demo, d.LogLevel)
	}
	if _, err := Load(env(map[string]string{"CLAMM_LOG_LEVEL": "loud"})); err == nil || !strings.Contains(err.Error(), "CLAMM_LOG_LEVEL") {
		t.Fatalf("bad level: %v", err)
	}
}
