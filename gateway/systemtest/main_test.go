package systemtest

import (
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/cache/redistier/redistest"
	"github.com/clamm-gateway/clamm-gateway/internal/prereq"
	"github.com/clamm-gateway/clamm-gateway/subgraph/mappinghosttest"
)

// TestMain stops at once, in one line, when what these tests need beyond
// Go modules is missing, instead of failing test by test.
func TestMain(m *testing.M) { prereq.Main(m, redistest.Prerequisites, mappinghosttest.Prerequisites) }
