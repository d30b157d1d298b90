package systemtest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// failLPRead makes the fake node's answer to a liquidity provider's state
// read (the ChainedRead that asks the position manager's
// whitelistedHandlers) say that the calls with selector failed, as a call
// that runs out of gas or a node that drops it does; every other read is
// answered as is.
func failLPRead(selector []byte) func(common.Address, []byte, []byte) []byte {
	lpRead := contracts.PositionManagerLP.Methods["whitelistedHandlers"].ID
	return func(_ common.Address, data, ret []byte) []byte {
		calls, chained := contracts.UnpackChainedReadCode(data)
		if !chained {
			return ret
		}
		var hit []int
		isLP := false
		for i, c := range calls {
			isLP = isLP || bytes.HasPrefix(c.Data, lpRead)
			if bytes.HasPrefix(c.Data, selector) {
				hit = append(hit, i)
			}
		}
		if !isLP || len(hit) == 0 {
			return ret
		}
		ok, res, err := contracts.UnpackChainedRead(ret)
		if err != nil {
			panic(err)
		}
		for _, i := range hit {
			ok[i], res[i] = false, []byte{}
		}
		out, err := contracts.PackChainedReadOutput(ok, res)
		if err != nil {
			panic(err)
		}
		return out
	}
}

// The block, its time and the user's shares a prepared deposit or
// withdrawal is read at have no default: read as 0 they would simulate at
// block 1, hide a passed cooldown or answer "not held". When the node
// fails one of those reads, the answer is the node's fault, a 502
// RPC_ERROR, and it is not cached: the same request once the node answers
// again is read afresh.
func TestLPStateReadFailureIsTheNodes(t *testing.T) {
	srv, f := newFakeServer(t)
	reads := []struct {
		name     string
		selector []byte
	}{
		{"block time", contracts.Multicall3.Methods["getCurrentBlockTimestamp"].ID},
		{"block number", contracts.Multicall3.Methods["getBlockNumber"].ID},
		{"shares", contracts.HandlerLP.Methods["balanceOf"].ID},
	}
	for k, r := range reads {
		// A request of its own per read (another amount, other shares), so
		// that an answer cached by an earlier round cannot stand in for it.
		// What each answers when every read succeeds: the deposit a 200
		// (approval and multicall simulated together on alice's stated
		// balances), the withdrawal a 404 (the fake keeps no LP positions).
		queries := []struct {
			name, path string
			ok         int
		}{
			{"deposit", strings.Replace(depositQry, "amount=1000000000000000000", "amount=100000000000000000"+strconv.Itoa(k), 1), http.StatusOK},
			{"withdrawal", strings.Replace(withdrawQry, "shares=max", "shares="+strconv.Itoa(k+1), 1), http.StatusNotFound},
		}
		for _, q := range queries {
			path := q.path
			f.Node.Rewrite = failLPRead(r.selector)
			rec := get(t, srv, path)
			f.Node.Rewrite = nil
			var body struct{ Error struct{ Code string } }
			_ = json.Unmarshal(rec.Body.Bytes(), &body)
			if rec.Code != http.StatusBadGateway || body.Error.Code != "RPC_ERROR" {
				t.Errorf("%s failing, %s: %d %s", r.name, q.name, rec.Code, rec.Body)
			}
			again := get(t, srv, path)
			if again.Code != q.ok || again.Header().Get("X-Cache") == "HIT" {
				t.Errorf("%s failed, %s once the node recovered: %d %s %.200s", r.name, q.name, again.Code, again.Header().Get("X-Cache"), again.Body)
			}
		}
	}
}
