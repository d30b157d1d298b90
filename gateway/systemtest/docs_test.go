package systemtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/app"
	"github.com/clamm-gateway/clamm-gateway/internal/config"
	"github.com/clamm-gateway/clamm-gateway/internal/metrics"
)

// userDocs are the pages written for users: the README and docs/.
func userDocs(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v (%d pages)", err, len(pages))
	}
	return append([]string{filepath.Join(root, "README.md")}, pages...)
}

// An example is one curl line of a page: the URL it asks, its headers,
// the status its comment shows (200 when it shows none) and the pattern
// its `| grep` looks for in the answer.
type example struct {
	page, line string
	url        string
	headers    [][2]string
	status     int
	grep       string // a regexp, (?i) when the grep is -i
	withHead   bool   // curl -i: the grep reads the header lines too
}

var (
	exampleURL    = regexp.MustCompile(`'?(localhost:8080[^'\s]*)'?`)
	exampleHeader = regexp.MustCompile(`-H '([^:']+):\s*([^']*)'`)
	exampleStatus = regexp.MustCompile(`#\s*(\d{3})\s*$`)
	exampleGrep   = regexp.MustCompile(`\|\s*grep\s+((?:-\w+\s+)*)'([^']*)'`)
	curlInclude   = regexp.MustCompile(`^curl\s+(?:-\w+\s+)*-\w*i`)
)

func examples(t *testing.T) []example {
	t.Helper()
	var out []example
	for _, page := range userDocs(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			l := strings.TrimSpace(line)
			if !strings.HasPrefix(l, "curl ") {
				continue
			}
			ex, ok := parseExample(page, l)
			if !ok {
				t.Errorf("%s: a curl example that asks no localhost:8080 URL: %s", page, l)
				continue
			}
			out = append(out, ex)
		}
	}
	return out
}

// parseExample reads one curl line of a page; false when it asks no
// localhost:8080 URL.
func parseExample(page, l string) (example, bool) {
	m := exampleURL.FindStringSubmatch(l)
	if m == nil {
		return example{}, false
	}
	ex := example{page: page, line: l, url: m[1], status: http.StatusOK}
	for _, h := range exampleHeader.FindAllStringSubmatch(l, -1) {
		ex.headers = append(ex.headers, [2]string{h[1], h[2]})
	}
	if s := exampleStatus.FindStringSubmatch(l); s != nil {
		ex.status, _ = strconv.Atoi(s[1])
	}
	if g := exampleGrep.FindStringSubmatch(l); g != nil {
		ex.grep = "(?m)" + g[2]
		if strings.Contains(g[1], "i") {
			ex.grep = "(?i)" + ex.grep
		}
	}
	ex.withHead = curlInclude.MatchString(l)
	return ex, true
}

// Every example command in the README and docs/ runs against the demo, as
// `go run ./cmd/clamm-gateway` serves it, and gets the status it is shown
// with; a `| grep` in it finds its pattern. An ETag placeholder is the
// ETag of the example before it.
func TestDocExamplesAnswerAsShown(t *testing.T) {
	t.Parallel()
	a, err := app.New(app.Options{Config: config.Default(), Demo: true, Metrics: metrics.New()})
	if err != nil {
		t.Fatal(err)
	}
	all := examples(t)
	if len(all) < 20 {
		t.Fatalf("only %d examples found: is the README's format still the one this test reads?", len(all))
	}
	lastETag := ""
	for _, ex := range all {
		req := httptest.NewRequest(http.MethodGet, strings.TrimPrefix(ex.url, "localhost:8080"), nil)
		for _, h := range ex.headers {
			v := h[1]
			if strings.Contains(v, "<the ETag above>") {
				v = lastETag
			}
			req.Header.Set(h[0], v)
		}
		rec := httptest.NewRecorder()
		a.Server.ServeHTTP(rec, req)
		if rec.Code != ex.status {
			t.Errorf("%s: %s\n  answered %d, the page shows %d: %s", ex.page, ex.line, rec.Code, ex.status, rec.Body)
		}
		text := rec.Body.String()
		if ex.withHead {
			var head strings.Builder
			for k, vs := range rec.Header() {
				for _, v := range vs {
					head.WriteString(k + ": " + v + "\n")
				}
			}
			text = head.String() + text
		}
		if ex.grep != "" && !regexp.MustCompile(ex.grep).MatchString(text) {
			t.Errorf("%s: %s\n  the answer has no line matching %q", ex.page, ex.line, ex.grep)
		}
		if e := rec.Header().Get("ETag"); e != "" {
			lastETag = e
		}
	}
}

var (
	mdLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	issueNumber = regexp.MustCompile(`(?i)\bissues?\s*#?\d+|(^|[\s(])#\d+\b`)
)

// The README fits on a few screens, every relative link of the user docs
// resolves to a file of the repository, and no page names a tracker's
// issue numbers, which a user cannot see.
func TestUserDocsHold(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "\n"); n >= 250 {
		t.Errorf("README.md has %d lines; keep it under 250 and move detail to docs/", n)
	}
	pages := append(userDocs(t), filepath.Join(root, "CHANGELOG.md"), filepath.Join(root, "RELIABILITY.md"), filepath.Join(root, "BENCHMARKS.md"))
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", page, m[1])
			}
		}
		if m := issueNumber.FindString(string(raw)); m != "" {
			t.Errorf("%s names an issue number (%q): users cannot see the tracker", page, m)
		}
	}
}

// BENCHMARKS.md reports measurements, not how they came about: it names
// no working session and no review, which a reader cannot see.
func TestBenchmarksNameNoSession(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?i)\bsessions?\b|\breview`).FindAllString(string(raw), -1); m != nil {
		t.Errorf("BENCHMARKS.md names %q", m)
	}
}

// The README's set-up is two commands, the run and the tests, whatever
// the text around them says.
func TestReadmeSetUpIsTwoCommands(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i := strings.Index(s, "\n## Set-up\n")
	if i < 0 {
		t.Fatal("README.md has no Set-up section")
	}
	section := s[i+len("\n## Set-up\n"):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var cmds []string
	for _, l := range strings.Split(section, "\n") {
		if strings.HasPrefix(l, "    ") && strings.TrimSpace(l) != "" {
			cmds = append(cmds, strings.TrimSpace(l))
		}
	}
	if want := []string{"go run ./cmd/clamm-gateway", "scripts/test-setup.sh && go test ./..."}; !slices.Equal(cmds, want) {
		t.Errorf("the Set-up commands are %q, want %q", cmds, want)
	}
}

// Every route of the endpoint table is a row of the README's endpoint
// table and has its section in docs/api.md (a heading "GET <path>"): the
// README's table is written by hand, and a route added without its row
// went unseen (/clamm/stats/leaderboard did).
func TestReadmeAndAPIDocListEveryRoute(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	api, err := os.ReadFile(filepath.Join(root, "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "| Path | Answers |")
	if !ok {
		t.Fatal("README.md has no endpoint table (| Path | Answers |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, cell := range strings.Split(first, ", ") {
			rows[strings.Trim(cell, "`")] = true
		}
	}
	headings := regexp.MustCompile(`(?m)^#{2,3} (GET|POST) (\S+)\s*$`)
	sections := map[string]bool{}
	for _, m := range headings.FindAllStringSubmatch(string(api), -1) {
		sections[m[1]+" "+m[2]] = true
	}
	ops := newDemoServer(t).Operations()
	if len(ops) < 20 {
		t.Fatalf("%d operations", len(ops))
	}
	for _, op := range ops {
		if !rows[op.Path] {
			t.Errorf("README.md's endpoint table has no row for %s", op.Path)
		}
		if !sections[op.Method+" "+op.Path] {
			t.Errorf("docs/api.md has no section \"%s %s\"", op.Method, op.Path)
		}
	}
}
