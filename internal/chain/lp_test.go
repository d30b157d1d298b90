package chain

import (
	"context"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/problem"
)

type paramsError struct{}

func (paramsError) Error() string  { return "invalid argument 2: json: cannot unmarshal" }
func (paramsError) ErrorCode() int { return -32602 }

// refusingNode answers every element of a batch with invalid params, as a
// node without eth_call overrides does.
type refusingNode struct{ Caller }

func (refusingNode) BatchCallContext(_ context.Context, b []rpc.BatchElem) error {
	for i := range b {
		b[i].Error = paramsError{}
	}
	return nil
}

// A node that refuses eth_call's overrides is named as such (an operator
// can change nodes), a 502, not a generic failure.
func TestProbeOnANodeWithoutOverrides(t *testing.T) {
	r := newTestReader(t, refusingNode{}, common.Address{})
	_, err := r.SimulateLP(context.Background(), Head{EVMNumber: 1}, LPSimulation{Signer: common.Address{1}, Steps: []LPStep{{To: common.Address{2}}}})
	p := problem.As(err)
	if p == nil || p.Code != problem.RPCError || !strings.Contains(err.Error(), "state and a block override") {
		t.Fatalf("%v", err)
	}
}
