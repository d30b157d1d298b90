package gateway

import (
	"encoding/json"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// The error catalogue (internal/problem/codes.go) is the one list of codes:
// the OpenAPI document's enum and the error table of docs/api.md must say exactly
// the same, and each row's status must be the one the code's kind
// maps to here.
func TestErrorCatalogueMatchesDocs(t *testing.T) {
	t.Parallel()
	declared := map[string]int{}
	for _, c := range problem.Catalogue() {
		if _, dup := declared[c.Name()]; dup {
			t.Errorf("%s declared twice", c.Name())
		}
		if c.Meaning() == "" {
			t.Errorf("%s has no documented meaning", c.Name())
		}
		declared[c.Name()] = statusOf(c.Kind())
	}

	var doc struct {
		Components struct {
			Schemas struct {
				Error struct {
					Properties struct {
						Error struct {
							Properties struct {
								Code struct {
									Enum []string `json:"enum"`
								} `json:"code"`
							} `json:"properties"`
						} `json:"error"`
					} `json:"properties"`
				} `json:"Error"`
			} `json:"schemas"`
		} `json:"components"`
	}
	raw, err := docs.ReadFile("docs/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	enum := doc.Components.Schemas.Error.Properties.Error.Properties.Code.Enum
	if got, want := sorted(enum), sortedKeys(declared); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("openapi.json Error.code enum\n got %v\nwant %v (internal/problem/codes.go)", got, want)
	}

	readme, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]int{}
	row := regexp.MustCompile(`(?m)^\| (\d{3}) \| ([^|]*) \|`)
	code := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		status, _ := strconv.Atoi(m[1])
		for _, c := range code.FindAllStringSubmatch(m[2], -1) {
			if _, dup := documented[c[1]]; dup {
				t.Errorf("docs/api.md: %s is in two rows of the error table", c[1])
			}
			documented[c[1]] = status
		}
	}
	for name, status := range declared {
		if got, ok := documented[name]; !ok {
			t.Errorf("docs/api.md error table lacks %s", name)
		} else if got != status {
			t.Errorf("docs/api.md puts %s under %d; its kind is %d", name, got, status)
		}
	}
	for name := range documented {
		if _, ok := declared[name]; !ok {
			t.Errorf("docs/api.md documents %s, which internal/problem does not declare", name)
		}
	}
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func sortedKeys(m map[string]int) []string {
	var s []string
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}
