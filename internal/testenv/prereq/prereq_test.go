package prereq_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// A missing prerequisite skips the test, naming it and the set-up script;
// under CLAMM_TEST_REQUIRE_ALL it fails the test instead; a present one
// lets it run. Each case runs in a child process, where a skip or a
// failure ends only that process's test.
func TestMissingSkipsOrFailsUnderRequireAll(t *testing.T) {
	if os.Getenv("PREREQ_CHILD") != "" {
		prereq.Programs(t, "go")
		prereq.Need(t, "the thing", errors.New("not there"))
		t.Log("ran past a missing prerequisite")
		return
	}
	for _, c := range []struct {
		name, requireAll, want string
		fails                  bool
	}{
		{"skips", "", "--- SKIP", false},
		{"fails under " + prereq.RequireAll, "1", "--- FAIL", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMissingSkipsOrFailsUnderRequireAll$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "PREREQ_CHILD=1", prereq.RequireAll+"="+c.requireAll)
			out, err := cmd.CombinedOutput()
			if (err != nil) != c.fails || !strings.Contains(string(out), c.want) ||
				!strings.Contains(string(out), "needs the thing: not there (run scripts/test-setup.sh)") ||
				strings.Contains(string(out), "ran past") {
				t.Fatalf("exit %v:\n%s", err, out)
			}
		})
	}
}
