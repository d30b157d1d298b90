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
	// exact is the cassette, request by request (replay.Key); the answers
	// are held as bytes, not pointers (held.go), as calls and other are.
	exact *heldAnswers
	calls *heldAnswers // by callKey(target, data)
	// other answers every recorded request other than eth_call by method
	// and parameters, so a batch that mixes one (the head's header) with
	// calls the recordings saw apart is answered too.
	other *heldAnswers
	// Per market: the ids whose ownerOf the recordings answered, and one id
	// they show was never minted (unminted.go).
	minted   map[common.Address]map[common.Hash]bool
	unminted map[common.Address]common.Hash
}

// callAnswer is one call's outcome as ChainedRead and aggregate3 report it;
// rpcErr is a plain eth_call's JSON-RPC error (a revert) as recorded.
type callAnswer struct {
	ok     bool
	ret    []byte
	rpcErr json.RawMessage
}

// callKey indexes a call by target and calldata, with an exercise's
// minimum outputs zeroed (withoutMinimums): they follow from the request's
// slippage, and on the demo's pools, which have no price impact, every
// minimum of a slippage above zero is below what the swap delivers, so the
// recorded outcome is the outcome at any slippage.
func callKey(target common.Address, data []byte) string {
	if d, ok := withoutMinimums(data); ok {
		data = d
	}
	return string(target[:]) + string(data)
}

// withOverrides says whether an eth_call's parameters carry state or block
// overrides (a third or fourth parameter): a liquidity provider's
// simulation puts its probe's code, steps included, at the signer's
// address that way and calls it with no data, so its outcome follows from
// the overrides, not from the call. Only the exact recordings answer such
// a call; keyed by target and data alone, every simulation looked alike
// and a variation nobody recorded got another's outcome.
func withOverrides(params []json.RawMessage) bool { return len(params) > 2 }

type ethCallArgs struct {
	From *common.Address `json:"from,omitempty"`
	To   *common.Address `json:"to,omitempty"`
	Data hexutil.Bytes   `json:"data"`
}

// newNode indexes the cassette's eth_call answers. A call whose selector is
// aggregate3 is taken as Multicall3's, whatever its address.
func newNode(raw []byte) (*node, error) {
	var c replay.RPCCassette
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	if c.Format != replay.RPCFormat {
		return nil, fmt.Errorf("rpc cassette format %q, want %q", c.Format, replay.RPCFormat)
	}
	n := &node{exact: newHeldAnswers(), calls: newHeldAnswers(), other: newHeldAnswers()}
	defer func() { n.exact.seal(); n.calls.seal(); n.other.seal() }()
	for _, in := range c.Interactions {
		k, err := replay.Key(in.Method, in.Params)
		if err != nil {
			return nil, err
		}
		n.exact.put(k, callAnswer{ret: in.Result, rpcErr: in.Error})
		if in.Method != "eth_call" && len(in.Error) == 0 {
			n.other.put(otherKey(in.Method, in.Params), callAnswer{ret: in.Result})
			continue
		}
		var params []json.RawMessage
		var args ethCallArgs
		if in.Method != "eth_call" || json.Unmarshal(in.Params, &params) != nil || len(params) == 0 || len(params) > 2 ||
			json.Unmarshal(params[0], &args) != nil {
			continue // not an eth_call the index can answer (overrides: see withOverrides)
		}
		var out hexutil.Bytes
		switch {
		case len(in.Error) > 0 && args.To != nil:
			n.calls.put(callKey(*args.To, args.Data), callAnswer{rpcErr: in.Error})
		case len(in.Error) == 0 && json.Unmarshal(in.Result, &out) == nil:
			n.index(args, out)
		}
	}
	n.indexUnminted()
	return n, nil
}

// otherKey indexes a request other than eth_call by method and compacted
// parameters.
func otherKey(method string, params json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, params) != nil {
		return method + "\x00" + string(params)
	}
	return method + "\x00" + b.String()
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
				n.calls.put(callKey(target, c.Data), callAnswer{ok: ok[i], ret: ret[i]})
			}
		}
	case isAggregate3(args.Data):
		calls, err := unpackAggregate3(args.Data)
		var res []contracts.Multicall3Result
		if err != nil || contracts.Multicall3.UnpackIntoInterface(&res, "aggregate3", out) != nil || len(res) != len(calls) {
			return
		}
		for i, c := range calls {
			n.calls.put(callKey(c.Target, c.CallData), callAnswer{ok: res[i].Success, ret: res[i].ReturnData})
		}
	default:
		n.calls.put(callKey(*args.To, args.Data), callAnswer{ok: true, ret: out})
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
// the contract would; an aggregate3 call by call; a plain call as indexed,
// its recorded error included. false: some call was never answered in the
// recordings.
func (n *node) answer(args ethCallArgs) ([]byte, json.RawMessage, bool) {
	if args.To != nil && !isAggregate3(args.Data) {
		a, found := n.lookup(*args.To, args.Data)
		if found && a.rpcErr != nil {
			return nil, a.rpcErr, true
		}
		return a.ret, nil, found && a.ok
	}
	ret, ok := n.answerBatch(args)
	return ret, nil, ok
}

// answerBatch answers a ChainedRead or aggregate3 call from the index.
func (n *node) answerBatch(args ethCallArgs) ([]byte, bool) {
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
			a, found := n.lookup(target, c.Data)
			if !found || a.rpcErr != nil {
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
			a, found := n.lookup(c.Target, c.CallData)
			if !found || a.rpcErr != nil || (!a.ok && !c.AllowFailure) {
				return nil, false
			}
			res[i] = contracts.Multicall3Result{Success: a.ok, ReturnData: a.ret}
		}
		out, err := contracts.Multicall3.Methods["aggregate3"].Outputs.Pack(res)
		return out, err == nil
	}
	return nil, false
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
	if resp, ok := n.replayExact(req, body); ok {
		return resp, nil
	}
	msgs, batch, err := decodeRPC[rpcMessage](body)
	if err != nil {
		return nil, fmt.Errorf("demo: bad JSON-RPC request: %w", err)
	}
	out := make([]rpcMessage, len(msgs))
	for i, m := range msgs {
		if m.Method != "eth_call" {
			params, _ := json.Marshal(m.Params)
			res, ok := n.other.get(otherKey(m.Method, params))
			if !ok { // the log names what was asked: a block number is no secret
				return nil, fmt.Errorf("demo: %s %.200s: %w", m.Method, params, problem.ErrNotRecorded)
			}
			out[i] = rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: res.ret}
			continue
		}
		var args ethCallArgs
		if len(m.Params) == 0 || withOverrides(m.Params) || json.Unmarshal(m.Params[0], &args) != nil {
			return nil, fmt.Errorf("demo: %s: %w", m.Method, problem.ErrNotRecorded)
		}
		ret, rpcErr, ok := n.answer(args)
		if !ok {
			return nil, fmt.Errorf("demo: eth_call: %w", problem.ErrNotRecorded)
		}
		if rpcErr != nil {
			out[i] = rpcMessage{JSONRPC: "2.0", ID: m.ID, Error: rpcErr}
			continue
		}
		res, _ := json.Marshal(hexutil.Bytes(ret))
		out[i] = rpcMessage{JSONRPC: "2.0", ID: m.ID, Result: res}
	}
	if batch {
		return replay.JSONAnswer(req, out)
	}
	return replay.JSONAnswer(req, out[0])
}
