package trade

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

// An add-on read that keeps failing the same way is logged once; another
// field, chain or code is another cause, logged once too.
func TestAddOnFailuresAreLoggedOncePerCause(t *testing.T) {
	var buf bytes.Buffer
	s := New(nil, nil, nil)
	s.LogTo(slog.New(slog.NewTextHandler(&buf, nil)))
	market := common.HexToAddress("0x1D5DE630BbBF68c9bf17D8462605227D79eA910C")
	rpc := problem.New(problem.RPCError, "the chain's auto-exerciser does not answer")
	quote := problem.New(problem.QuoteFailed, "QuoterV2 cannot quote leg 0")
	for range 3 {
		s.addOns.once(5000, market, "autoExercise", rpc)
		s.addOns.once(5000, market, "exerciseValue", quote)
	}
	s.addOns.once(42161, market, "autoExercise", rpc)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], "code=RPC_ERROR") || !strings.Contains(lines[1], "code=QUOTE_FAILED") || !strings.Contains(lines[2], "chain=42161") {
		t.Errorf("logged:\n%s", buf.String())
	}
}
