package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/problem"
	"github.com/clamm-gateway/clamm-gateway/internal/replay"
)

// node answers the gateway's JSON-RPC from the demo's recordings, call by
// call: every answer inside a recorded ChainedRead or Multicall3 aggregate3
// batch is indexed by (target, calldata), so a batch the recordings never
// saw as a whole (a warm read where a cold one was recorded, another set of
// handlers for another reach) is answered when each of its calls was. A
// request that is not an eth_call, or a call never answered, is replayed
// from the cassette as recorded or fails with problem.ErrNotRecorded.
type node struct {
	exact http.RoundTripper     // the cassette, request by request
	calls map[string]callAnswer // by callKey(target, data)
}

// callAnswer is one call's outcome as ChainedRead and aggregate3 report it.
type callAnswer struct {
	ok  bool
	ret []byte
}

func callKey(target common.Address, data []byte) string {
	return string(target[:]) + string(data)
}

type ethCallArgs struct {
	From *common.Address `json:"from,omitempty"`
	To   *common.Address `json:"to,omitempty"`
	Data hexutil.Bytes   `json:"data"`
}

// newNode indexes the cassette's eth_call answers. A call whose selector is
// aggregate3 is taken as Multicall3's, whatever its address.
func newNode(raw []byte) (*node, error) {
	exact, err := replay.LoadRPCCassette(raw)
	if err != nil {
		return nil, err
	}
	var c replay.RPCCassette
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	n := &node{exact: exact, calls: map[string]callAnswer{}}
	for _, in := range c.Interactions {
		if in.Method != "eth_call" || len(in.Error) > 0 {
			continue
		}
		var params []json.RawMessage
		var args ethCallArgs
		var out hexutil.Bytes
		if json.Unmarshal(in.Params, &params) != nil || len(params) == 0 || json.Unmarshal(params[0], &args) != nil ||
			json.Unmarshal(in.Result, &out) != nil {
			continue
		}
		n.index(args, out)
	}
	return n, nil
}

// index records each call answered inside a batch, and the answer of a
// plain call by (target, calldata).
func (n *node) index(args ethCallArgs, out []byte) {
	switch {
	case args.To == nil:
		calls, isChained := contracts.UnpackChainedReadCode(args.Data)
		ok, ret, err := contracts.UnpackChainedRead(out)
		if !isChained || err != nil || len(ok) != len(calls) {
			return
		}
		for i, c := range calls {
			if target, run := c.TargetAt(i, ok, ret); run {
				n.calls[callKey(target, c.Data)] = callAnswer{ok[i], ret[i]}
			}
		}
	case isAggregate3(args.Data):
		calls, err := unpackAggregate3(args.Data)
		var res []contracts.Multicall3Result
		if err != nil || contracts.Multicall3.UnpackIntoInterface(&res, "aggregate3", out) != nil || len(res) != len(calls) {
			return
		}
		for i, c := range calls {
			n.calls[callKey(c.Target, c.CallData)] = callAnswer{res[i].Success, res[i].ReturnData}
		}
	default:
		n.calls[callKey(*args.To, args.Data)] = callAnswer{true, out}
	}
}

func isAggregate3(data []byte) bool {
	m, err := contracts.Multicall3.MethodById(data)
	return err == nil && len(data) >= 4 && m.Name == "aggregate3"
}

func unpackAggregate3(data []byte) ([]contracts.Multicall3Call, error) {
	m, err := contracts.Multicall3.MethodById(data)
	if err != nil {
		return nil, err
	}
	args, err := m.Inputs.Unpack(data[4:])
	if err != nil {
		return nil, err
	}
	raw, ok := args[0].([]struct {
		Target       common.Address `json:"target"`
		AllowFailure bool           `json:"allowFailure"`
		CallData     []byte         `json:"callData"`
	})
	if !ok {
		return nil, fmt.Errorf("aggregate3 arguments of type %T", args[0])
	}
	calls := make([]contracts.Multicall3Call, len(raw))
	for i, c := range raw {
		calls[i] = contracts.Multicall3Call{Target: c.Target, AllowFailure: c.AllowFailure, CallData: c.CallData}
	}
	return calls, nil
}

// answer runs an eth_call from the index: a ChainedRead call by call, as
// the contract would; an aggregate3 call by call; a plain call as indexed.
// false: some call was never answered in the recordings.
func (n *node) answer(args ethCallArgs) ([]byte, bool) {
	switch {
	case args.To == nil:
		calls, isChained := contracts.UnpackChainedReadCode(args.Data)
		if !isChained {
			return nil, false
		}
		ok, ret := make([]bool, len(calls)), make([][]byte, len(calls))
		for i, c := range calls {
			target, run := c.TargetAt(i, ok, ret)
			if !run {
				ret[i] = []byte{}
				continue
			}
			a, found := n.calls[callKey(target, c.Data)]
			if !found {
				return nil, false
			}
			ok[i], ret[i] = a.ok, a.ret
		}
		out, err := contracts.PackChainedReadOutput(ok, ret)
		return out, err == nil
	case isAggregate3(args.Data):
		calls, err := unpackAggregate3(args.Data)
		if err != nil {
			return nil, false
		}
		res := make([]contracts.Multicall3Result, len(calls))
		for i, c := range calls {
			a, found := n.calls[callKey(c.Target, c.CallData)]
			if !found || (!a.ok && !c.AllowFailure) {
				return nil, false
			}
			res[i] = contracts.Multicall3Result{Success: a.ok, ReturnData: a.ret}
		}
		out, err := contracts.Multicall3.Methods["aggregate3"].Outputs.Pack(res)
		return out, err == nil
	default:
		a, found := n.calls[callKey(*args.To, args.Data)]
		return a.ret, found && a.ok
	}
}

type rpcMessage struct {
	JSONRPC string            `json:"jsonrpc"`
	ID      json.RawMessage   `json:"id,omitempty"`
	Method  string            `json:"method,omitempty"`
	Params  []json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage   `json:"result,omitempty"`
	Error   json.RawMessage   `json:"error,omitempty"`
}

// RoundTrip implements http.RoundTripper: requests the cassette holds as
// they are replay as recorded; other eth_calls are answered from the index.
func (n *node) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	retry := req.Clone(req.Context())
	retry.Body = io.NopCloser(bytes.NewReader(body))
	if resp, err := n.exact.RoundTrip(retry); err == nil {
		return resp, nil
	}
	trimmed := bytes.TrimSpace(body)
	batch := len(trimmed) > 0 && trimmed[0] == '['
	var msgs []rpcMessage
	if batch {
		err = json.Unmarshal(trimmed, &msgs)
	} else {
		msgs = make([]rpcMessage, 1)
		err = json.Unmarshal(trimmed, &msgs[0])
	}
	if err != nil {
		return nil, fmt.Errorf("demo: bad JSON-RPC request: %w", err)
	}
	out := make([]rpcMessage, len(msgs))
	for i, m := range msgs {
		var args ethCallArgs
		if m.Method != "eth_call" || len(m.Params) == 0 || json.Unmarshal(m.Params[0], &args) != nil {
			return nil, fmt.Errorf("demo: %s: %w", m.Method, problem.ErrNotRecorded)
		}
		ret, ok := n.answer(args)
		if !ok {
			return nil, fmt.Errorf("demo: eth_call: %w", problem.ErrNotRecorded)
		}
		res, _ := json.Marshal(hexutil.Bytes(ret))
		out[i] = rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: res}
	}
	if batch {
		return replay.JSONAnswer(req, out)
	}
	return replay.JSONAnswer(req, out[0])
}
