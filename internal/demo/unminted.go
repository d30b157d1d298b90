package demo

import (
	"bytes"
	"math/big"

	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
	"github.com/clamm-gateway/clamm-gateway/internal/swap"
)

// The demo answers every option id of its market, not only the recorded
// ones. Its requests read every option its market ever minted (Requests
// prepares each), so an id whose ownerOf the recordings never answered was
// never minted, and a market answers every never-minted id alike: ownerOf
// reverts naming the id, opData and opTickMap are zero. The recordings hold
// one such id (999); another is answered as that one, with the id's word
// put in its place. So a prepare of any unknown id is the market's own
// OPTION_NOT_FOUND, not a missing recording.

// tokenSelectors are the market getters keyed by an option id (their
// first argument word).
var tokenSelectors = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range []string{"ownerOf", "opData", "opTickMap"} {
		m[string(contracts.OptionMarketV2.Methods[name].ID)] = true
	}
	return m
}()

// indexUnminted finds, per market, the ids ownerOf answered for and one
// id it reverted for.
func (n *node) indexUnminted() {
	n.minted, n.unminted = map[common.Address]map[common.Hash]bool{}, map[common.Address]common.Hash{}
	ownerOf := string(contracts.OptionMarketV2.Methods["ownerOf"].ID)
	for key, a := range n.calls.all() {
		if len(key) != common.AddressLength+4+32 || key[common.AddressLength:common.AddressLength+4] != ownerOf {
			continue
		}
		target := common.BytesToAddress([]byte(key[:common.AddressLength]))
		id := common.BytesToHash([]byte(key[common.AddressLength+4:]))
		if a.ok {
			if n.minted[target] == nil {
				n.minted[target] = map[common.Hash]bool{}
			}
			n.minted[target][id] = true
		} else {
			n.unminted[target] = id
		}
	}
}

// lookup answers one call from the index, or a never-minted id's getter
// from the recorded never-minted id's.
func (n *node) lookup(target common.Address, data []byte) (callAnswer, bool) {
	if a, found := n.calls.get(callKey(target, data)); found {
		return a, true
	}
	template, has := n.unminted[target]
	if !has || len(data) < 4+32 || !tokenSelectors[string(data[:4])] {
		return callAnswer{}, false
	}
	id := common.BytesToHash(data[4:36])
	if n.minted[target][id] {
		return callAnswer{}, false // minted, but this call of it was never recorded
	}
	asked := bytes.Clone(data)
	copy(asked[4:36], template[:])
	a, found := n.calls.get(callKey(target, asked))
	if !found {
		return callAnswer{}, false
	}
	a.ret = bytes.ReplaceAll(a.ret, template[:], id[:])
	return a, true
}

// withoutMinimums returns exerciseOption calldata with the minimum output
// of every leg's swapData set to zero, and false for any other calldata:
// uni-v3's abi.encode(fee, amountOutMinimum) and 1inch's router calldata
// (its minReturn word). Other swapData is left as it is.
func withoutMinimums(data []byte) ([]byte, bool) {
	m, err := contracts.OptionMarketV2.MethodById(data)
	if err != nil || m.Name != "exerciseOption" {
		return nil, false
	}
	vals, err := m.Inputs.Unpack(data[4:])
	if err != nil || len(vals) != 1 {
		return nil, false
	}
	p, ok := vals[0].(struct {
		OptionId            *big.Int         `json:"optionId"`
		Swapper             []common.Address `json:"swapper"`
		SwapData            [][]byte         `json:"swapData"`
		LiquidityToExercise []*big.Int       `json:"liquidityToExercise"`
	})
	if !ok {
		return nil, false
	}
	for i, sd := range p.SwapData {
		sd = bytes.Clone(sd)
		if _, err := contracts.UniV3SwapData.Unpack(sd); err == nil && len(sd) == 64 {
			clear(sd[32:])
		} else if c, err := swap.DecodeRouterCall(sd); err == nil {
			clear(sd[c.MinReturnAt : c.MinReturnAt+32])
		}
		p.SwapData[i] = sd
	}
	out, err := m.Inputs.Pack(p)
	if err != nil {
		return nil, false
	}
	return append(bytes.Clone(data[:4]), out...), true
}
