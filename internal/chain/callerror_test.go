package chain_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/chain/chaintest"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/secret"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv"
)

// fakeNode serves node over HTTP and returns a reader dialled to it with
// go-ethereum's own client, so errors arrive as go-ethereum builds them.
func fakeNode(t *testing.T, node *chaintest.Node) (*chain.Reader, *rpc.Client) {
	t.Helper()
	srv := httptest.NewServer(node)
	t.Cleanup(srv.Close)
	c, err := rpc.DialHTTP(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return testenv.NewReader(t, c, node.Multicall3), c
}

// Only a revert is the contract's answer; every other JSON-RPC error of a
// simulation is the node failing, classified 502/503/504 with the node's
// text kept (scrubbed, bounded) for the log. go-ethereum gives every
// JSON-RPC error an ErrorData(), so "has data" must not mean "reverted".
func TestSimulateTellsRevertsFromNodeFailures(t *testing.T) {
	node := chaintest.NewNode(t)
	r, _ := fakeNode(t, node)
	revertData := "0x08c379a0" + strings.Repeat("0", 62) + "20" + strings.Repeat("0", 62) + "01" + "41" + strings.Repeat("0", 62)
	key := "k3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3yk3y"
	for _, c := range []struct {
		name     string
		fault    chaintest.RPCError
		revert   bool
		code     *problem.Code
		logHas   string
		logLacks string
	}{
		{name: "revert with data", fault: chaintest.RPCError{Code: 3, Message: "execution reverted: A", Data: revertData}, revert: true},
		{name: "revert without data", fault: chaintest.RPCError{Code: -32000, Message: "execution reverted"}, revert: true},
		{name: "header not found", fault: chaintest.RPCError{Code: -32000, Message: "header not found"}, code: problem.RPCError, logHas: "header not found"},
		{name: "rate limited", fault: chaintest.RPCError{Code: -32005, Message: "daily request count exceeded, request rate limited"}, code: problem.RPCUnavailable, logHas: "-32005"},
		{name: "rate limited, in Alchemy's words", fault: chaintest.RPCError{Code: 429, Message: "Your app has exceeded its compute units per second capacity"},
			code: problem.RPCUnavailable, logHas: "compute units"},
		{name: "out of gas", fault: chaintest.RPCError{Code: -32000, Message: "out of gas"}, code: problem.RPCError, logHas: "out of gas"},
		{name: "internal error", fault: chaintest.RPCError{Code: -32603, Message: "internal error"}, code: problem.RPCError, logHas: "-32603"},
		{name: "timeout", fault: chaintest.RPCError{Code: -32000, Message: "request timed out"}, code: problem.RPCTimeout},
		{name: "echoed key, huge", fault: chaintest.RPCError{Code: -32000, Message: "upstream https://rpc.example/v2/" + key + " failed " + strings.Repeat("x", 1<<20)},
			code: problem.RPCError, logLacks: key},
	} {
		t.Run(c.name, func(t *testing.T) {
			fault := c.fault
			node.CallFault = func(string) *chaintest.RPCError { return &fault }
			_, err := r.SimulateExercise(context.Background(), common.Address{1}, common.Address{2}, []byte{1, 2, 3, 4})
			var rev *chain.RevertError
			if isRev := errors.As(err, &rev); isRev != c.revert {
				t.Fatalf("revert %v, want %v: %v", isRev, c.revert, err)
			}
			if c.revert {
				if c.fault.Data != "" && len(rev.Data) != 100 {
					t.Errorf("revert data %x", rev.Data)
				}
				return
			}
			if p := problem.As(err); p.Code != c.code {
				t.Errorf("code %s, want %s: %v", p.Code, c.code, err)
			}
			text := err.Error()
			if !strings.Contains(text, c.logHas) || len(text) > 2*secret.MaxTextLen {
				t.Errorf("log text (%d bytes) lacks %q: %.300s", len(text), c.logHas, text)
			}
			if c.logLacks != "" && strings.Contains(text, c.logLacks) {
				t.Errorf("log text keeps %q", c.logLacks)
			}
		})
	}
}
