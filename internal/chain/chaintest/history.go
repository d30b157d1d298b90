package chaintest

import (
	"encoding/json"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// History is what the node held before its head, as a scenario states it:
// the logs eth_getLogs answers (in chain order, each with its block, index
// and blockTimestamp); TimeOf gives the blocks' times. eth_call
// keeps answering the head's state at every block (a pool's slot0 at an
// older block is its head price: a window's candles open at it only where
// no swap comes between the block read and the window).
type History struct {
	Logs []types.Log
}

// logs answers eth_getLogs over [fromBlock, toBlock] of the history (one
// address or a list; topic 0 one or a set).
func (n *Node) logs(req rpcRequest, resp *rpcResponse) {
	var f struct {
		FromBlock hexutil.Uint64  `json:"fromBlock"`
		ToBlock   hexutil.Uint64  `json:"toBlock"`
		Address   json.RawMessage `json:"address"`
		Topics    []json.RawMessage
	}
	if len(req.Params) < 1 || json.Unmarshal(req.Params[0], &f) != nil {
		resp.Error = &RPCError{Code: -32602, Message: "invalid params"}
		return
	}
	var addrs []common.Address
	if json.Unmarshal(f.Address, &addrs) != nil {
		var a common.Address
		if json.Unmarshal(f.Address, &a) == nil {
			addrs = []common.Address{a}
		}
	}
	var topics []common.Hash
	if len(f.Topics) > 0 && json.Unmarshal(f.Topics[0], &topics) != nil {
		var t common.Hash
		if json.Unmarshal(f.Topics[0], &t) == nil {
			topics = []common.Hash{t}
		}
	}
	out := []types.Log{}
	if n.History != nil {
		for _, l := range n.History.Logs {
			if l.BlockNumber >= uint64(f.FromBlock) && l.BlockNumber <= uint64(f.ToBlock) && matches(l, addrs, topics) {
				out = append(out, l)
			}
		}
	}
	resp.Result = out
}

func matches(l types.Log, addrs []common.Address, topics []common.Hash) bool {
	ok := len(addrs) == 0
	for _, a := range addrs {
		ok = ok || a == l.Address
	}
	if !ok || len(topics) == 0 {
		return ok
	}
	for _, t := range topics {
		if len(l.Topics) > 0 && l.Topics[0] == t {
			return true
		}
	}
	return false
}
