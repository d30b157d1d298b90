package indexertest

import (
	"fmt"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/clamm-gateway/clamm-gateway/internal/graphnode/mapping"
)

// Handler writes the logs a V2 single-tick liquidity handler and its pool
// emit, ABI-encoded with the subgraph's own ABIs, for ranges whose ids it
// derives as the contract does (keccak256(abi.encode(handler, pool, hook,
// tickLower, tickUpper))).
type Handler struct {
	Address, Pool, Hook common.Address
	handler, pool       abi.ABI
	// ids are the ranges' ids computed so far, by tickLower: a
	// history's events cycle through a few ranges.
	ids sync.Map
}

// NewHandler is a handler at addr over pool, with no hook.
func NewHandler(addr, pool common.Address) (*Handler, error) {
	h, err := mapping.ABI("UniswapV3SingleTickLiquidityHandlerV2")
	if err != nil {
		return nil, err
	}
	p, err := mapping.ABI("Pool")
	if err != nil {
		return nil, err
	}
	return &Handler{Address: addr, Pool: pool, handler: h, pool: p}, nil
}

// ID is the handler's token id of the range [tl, tl+10).
func (h *Handler) ID(tl int64) *big.Int {
	if id, ok := h.ids.Load(tl); ok {
		return new(big.Int).Set(id.(*big.Int))
	}
	id := h.computeID(tl)
	h.ids.Store(tl, id)
	return new(big.Int).Set(id)
}

func (h *Handler) computeID(tl int64) *big.Int {
	addr, _ := abi.NewType("address", "", nil)
	i24, _ := abi.NewType("int24", "", nil)
	packed, err := abi.Arguments{{Type: addr}, {Type: addr}, {Type: addr}, {Type: i24}, {Type: i24}}.
		Pack(h.Address, h.Pool, h.Hook, big.NewInt(tl), big.NewInt(tl+10))
	if err != nil {
		panic(err)
	}
	return new(big.Int).SetBytes(crypto.Keccak256(packed))
}

// eventShape is an event's signature and which of its inputs are indexed
// (two ABIs may index the same signature's inputs differently).
type eventShape struct {
	sig     string
	indexed uint64
}

// nonIndexedArgs are the events' non-indexed inputs by shape: copying
// them out of the ABI for every log cost the scale node more than
// packing them.
var nonIndexedArgs sync.Map

func nonIndexed(ev abi.Event) abi.Arguments {
	k := eventShape{sig: ev.Sig}
	for i, in := range ev.Inputs {
		if in.Indexed && i < 64 {
			k.indexed |= 1 << i
		}
	}
	if args, ok := nonIndexedArgs.Load(k); ok && len(ev.Inputs) <= 64 {
		return args.(abi.Arguments)
	}
	args := ev.Inputs.NonIndexed()
	nonIndexedArgs.Store(k, args)
	return args
}

// log encodes event name of a with args in its inputs' order (indexed ones
// into topics).
func log(a abi.ABI, name string, addr common.Address, args ...any) types.Log {
	ev, ok := a.Events[name]
	if !ok {
		panic(fmt.Sprintf("no event %s", name))
	}
	topics := []common.Hash{ev.ID}
	var data []any
	for i, in := range ev.Inputs {
		if in.Indexed {
			switch v := args[i].(type) {
			case common.Address:
				topics = append(topics, common.BytesToHash(v.Bytes()))
			case *big.Int:
				topics = append(topics, common.BigToHash(v))
			}
			continue
		}
		data = append(data, args[i])
	}
	packed, err := nonIndexed(ev).Pack(data...)
	if err != nil {
		panic(fmt.Sprintf("pack %s: %v", name, err))
	}
	return types.Log{Address: addr, Topics: topics, Data: packed}
}

// Mint is a deposit of liquidity into [tl, tl+10) by user.
func (h *Handler) Mint(user common.Address, tl, liquidity int64) types.Log {
	return log(h.handler, "LogMintedPosition", h.Address, h.ID(tl), big.NewInt(liquidity), h.Pool, h.Hook, user, big.NewInt(tl), big.NewInt(tl+10))
}

// Use is an option taking liquidity from the range.
func (h *Handler) Use(tl, liquidity int64) types.Log {
	return log(h.handler, "LogUsePosition", h.Address, h.ID(tl), big.NewInt(liquidity))
}

// Unuse is an exercise giving liquidity back.
func (h *Handler) Unuse(tl, liquidity int64) types.Log {
	return log(h.handler, "LogUnusePosition", h.Address, h.ID(tl), big.NewInt(liquidity))
}

// Donate is a premium donated to the range.
func (h *Handler) Donate(tl, liquidity int64) types.Log {
	return log(h.handler, "LogDonation", h.Address, h.ID(tl), big.NewInt(liquidity))
}

// Swap is a swap of the pool to sqrtPriceX96 at tick.
func (h *Handler) Swap(user common.Address, sqrtPriceX96 *big.Int, tick int64) types.Log {
	ev := h.pool.Events["Swap"]
	for name, e := range h.pool.Events {
		if len(e.Inputs) == 7 { // Uniswap's (Pancake's has two more fields)
			ev = h.pool.Events[name]
		}
	}
	return log(h.pool, ev.Name, h.Pool, user, user, big.NewInt(-5), big.NewInt(5), sqrtPriceX96, big.NewInt(1000), big.NewInt(tick))
}

// Slot0 answers the pool's slot0() at sqrtPriceX96 and tick, as the real
// getter's leading outputs.
func (h *Handler) Slot0(sqrtPriceX96 *big.Int, tick int64) func(to common.Address, data []byte, block uint64) ([]byte, bool) {
	m := h.pool.Methods["slot0"]
	out, err := m.Outputs.Pack(sqrtPriceX96, big.NewInt(tick))
	return func(to common.Address, data []byte, _ uint64) ([]byte, bool) {
		if err != nil || to != h.Pool || len(data) < 4 || string(data[:4]) != string(m.ID) {
			return nil, true
		}
		return out, false
	}
}
