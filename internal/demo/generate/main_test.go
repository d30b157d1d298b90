package main

import (
	"testing"

	"github.com/clamm-gateway/clamm-gateway/internal/prereq"
	"github.com/clamm-gateway/clamm-gateway/subgraph/mappinghosttest"
)

// TestMain stops at once, in one line, when the built subgraph is missing:
// the scenarios' entities are what its compiled mappings write.
func TestMain(m *testing.M) { prereq.Main(m, mappinghosttest.Prerequisites) }
