// Package queries holds the GraphQL documents the gateway sends to Graph Node.
// They are embedded so the binary needs nothing on disk, and can be replaced
// from a directory at run time (CLAMM_QUERIES_DIR) so an operator can point
// the gateway at a subgraph whose field names differ, using GraphQL aliases,
// without recompiling. Each document holds one named operation; the file name
// without ".graphql" is how the code refers to it.
package queries

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed *.graphql
var embedded embed.FS

// Names of the documents the service uses.
const (
	Strikes           = "strikes"
	ExerciseHistory   = "exercise_history"
	Meta              = "meta"
	PurchaseHistory   = "purchase_history"
	PurchasePositions = "purchase_positions"
	OptionMarkets     = "option_markets"
	LPDepositHistory  = "lp_deposit_history"
	LPWithdrawHistory = "lp_withdraw_history"
	LPPositions       = "lp_positions"
	StatsDays         = "stats_days"
	StatsDayBuyers    = "stats_day_buyers"
	StatsPurchases    = "stats_purchases"
	StatsExercises    = "stats_exercises"
	StatsRanges       = "stats_ranges"
	OpenOptions       = "open_options"
	SettlementHistory = "settlement_history"
	ExpiringOptions   = "expiring_options"
	ExerciseDelegates = "exercise_delegates"
	BoardPurchases    = "leaderboard_purchases"
	BoardExercises    = "leaderboard_exercises"
	Swappers          = "swappers"
)

// Document is one GraphQL operation.
type Document struct {
	Name          string // file name without .graphql
	OperationName string // the operation's declared name, sent as operationName
	Text          string
}

// Set maps document names to documents.
type Set map[string]Document

var opName = regexp.MustCompile(`(?m)^\s*query\s+([A-Za-z_][A-Za-z0-9_]*)`)

// Embedded returns the built-in documents.
func Embedded() Set {
	s, err := load(embedded)
	if err != nil {
		panic("queries: " + err.Error())
	}
	return s
}

// Load returns the built-in documents with any file of the same name in dir
// replacing its built-in version. An empty dir means the built-ins.
func Load(dir string) (Set, error) {
	s := Embedded()
	if dir == "" {
		return s, nil
	}
	// fs.Glob reads a missing directory as an empty one: the built-ins
	// would be served without a word.
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("queries dir: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("queries dir %s: not a directory", dir)
	}
	over, err := load(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("queries dir %s: %w", dir, err)
	}
	for name, d := range over {
		if _, ok := s[name]; !ok {
			return nil, fmt.Errorf("queries dir %s: %s.graphql replaces no known document", dir, name)
		}
		s[name] = d
	}
	return s, nil
}

func load(fsys fs.FS) (Set, error) {
	files, err := fs.Glob(fsys, "*.graphql")
	if err != nil {
		return nil, err
	}
	s := Set{}
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		m := opName.FindStringSubmatch(string(raw))
		if m == nil {
			return nil, fmt.Errorf("%s: no named query operation", f)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".graphql")
		s[name] = Document{Name: name, OperationName: m[1], Text: string(raw)}
	}
	return s, nil
}
