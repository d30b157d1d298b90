package secret

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// roomOnly matches what decides, outside this package, what is secret: a
// redaction placeholder of its own, net/url's masking, or a function of
// its own named for redacting or scrubbing.
var roomOnly = regexp.MustCompile(`"<redacted>"|\.Redacted\(\)|func (\([^)]*\) )?(Redact|Scrub|redact|scrub)[A-Za-z]*\(`)

// Secrets leave text in one room: no code the binaries link (non-test Go
// files) outside internal/secret redacts on its own, so a change of what
// counts as a secret is made once and reaches every log, error, trace and
// readiness answer.
func TestSecretsLeaveTextInOneRoom(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == filepath.Join(root, "internal", "secret") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range roomOnly.FindAllString(string(src), -1) {
			t.Errorf("%s redacts on its own (%s): use package secret", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
