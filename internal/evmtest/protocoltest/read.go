package protocoltest

import (
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// TokenIdInfo is the handler's tokenIds(uint256) getter, in the real field order.
type TokenIdInfo struct {
	TotalLiquidity           *big.Int
	TotalSupply              *big.Int
	LiquidityUsed            *big.Int
	FeeGrowthInside0LastX128 *big.Int
	FeeGrowthInside1LastX128 *big.Int
	TokensOwed0              *big.Int
	TokensOwed1              *big.Int
	LastDonation             uint64
	DonatedLiquidity         *big.Int
	Token0                   common.Address
	Token1                   common.Address
	Fee                      *big.Int
	ReservedLiquidity        *big.Int
}

// Position reads handler.tokenIds(tokenId).
func (p *Protocol) Position(handler common.Address, tokenID *big.Int) TokenIdInfo {
	return tokenIdInfo(p.Chain.Call(handler, HandlerV2.ABI, "tokenIds", tokenID))
}

// tokenIdInfo unpacks a tokenIds getter's values: 13 of a V2 handler, 12
// of a V1 handler (no reservedLiquidity: left nil).
func tokenIdInfo(v []any) TokenIdInfo {
	info := TokenIdInfo{v[0].(*big.Int), v[1].(*big.Int), v[2].(*big.Int), v[3].(*big.Int), v[4].(*big.Int),
		v[5].(*big.Int), v[6].(*big.Int), v[7].(uint64), v[8].(*big.Int), v[9].(common.Address), v[10].(common.Address),
		v[11].(*big.Int), nil}
	if len(v) > 12 {
		info.ReservedLiquidity = v[12].(*big.Int)
	}
	return info
}

// RangeInfo reads the handler's TokenIdInfo of a range.
func (p *Protocol) RangeInfo(r Range) TokenIdInfo {
	r = p.norm(r)
	return p.Position(r.Handler, p.TokenID(r))
}

// OptionData is the market's opData getter.
type OptionData struct {
	OpTickArrayLen       *big.Int
	TickLower, TickUpper int
	Expiry               *big.Int
	IsCall               bool
}

// OpData reads market.opData(id).
func (p *Protocol) OpData(id *big.Int) OptionData {
	v := p.Chain.Call(p.Market, MarketV2.ABI, "opData", id)
	return OptionData{v[0].(*big.Int), int(v[1].(*big.Int).Int64()), int(v[2].(*big.Int).Int64()), v[3].(*big.Int), v[4].(bool)}
}

// OpTicks reads every market.opTickMap(id, i) of an option.
func (p *Protocol) OpTicks(id *big.Int) []Leg {
	n := p.OpData(id).OpTickArrayLen.Int64()
	legs := make([]Leg, n)
	for i := range legs {
		v := p.Chain.Call(p.Market, MarketV2.ABI, "opTickMap", id, big.NewInt(int64(i)))
		legs[i] = Leg{Range{v[0].(common.Address), v[1].(common.Address), v[2].(common.Address),
			int(v[3].(*big.Int).Int64()), int(v[4].(*big.Int).Int64())}, v[5].(*big.Int)}
	}
	return legs
}

// OwnerOf reads the option's ERC721 owner.
func (p *Protocol) OwnerOf(id *big.Int) common.Address {
	return p.Chain.Call(p.Market, MarketV2.ABI, "ownerOf", id)[0].(common.Address)
}

// Slot0 reads a pool's sqrtPriceX96 and tick.
func (p *Protocol) Slot0(pool common.Address) (*big.Int, int) {
	v := p.Chain.Call(pool, mustUni(p.Chain.T, "pool").ABI, "slot0")
	return v[0].(*big.Int), int(v[1].(*big.Int).Int64())
}

// Balance reads an ERC20 balance.
func (p *Protocol) Balance(token, owner common.Address) *big.Int {
	return p.Chain.Call(token, Token.ABI, "balanceOf", owner)[0].(*big.Int)
}

// Event is a decoded log of a protocol contract, an ERC20 or a Uniswap pool.
type Event struct {
	Address common.Address
	Name    string
	Args    map[string]any
	Log     *types.Log
}

// Events decodes a receipt's logs with the ABI of the contract that
// emitted each one (the market, position manager, handler, tokens,
// Uniswap pools); logs of other contracts have an empty Name.
func (p *Protocol) Events(rc *types.Receipt) []Event {
	var out []Event
	if rc == nil {
		return nil
	}
	for _, l := range rc.Logs {
		out = append(out, decodeLog(p.abiOf(l.Address), l))
	}
	return out
}

// abiOf is the ABI of a contract the protocol deployed (registered by
// Deploy, DeployHandler, DeployV1, AddPool), or a Uniswap pool's when the
// address answers slot0, or nil.
func (p *Protocol) abiOf(addr common.Address) *abi.ABI {
	if a, ok := p.abis[addr]; ok {
		return a
	}
	if _, err := p.Chain.TryCall(p.Owner.Addr, addr, mustUni(p.Chain.T, "pool").ABI, "slot0"); err == nil {
		a := mustUni(p.Chain.T, "pool").ABI
		p.register(addr, a)
		return &a
	}
	return nil
}

func (p *Protocol) register(addr common.Address, a abi.ABI) {
	if p.abis == nil {
		p.abis = map[common.Address]*abi.ABI{}
	}
	p.abis[addr] = &a
}

func decodeLog(a *abi.ABI, l *types.Log) Event {
	ev := Event{Address: l.Address, Log: l, Args: map[string]any{}}
	if a == nil || len(l.Topics) == 0 {
		return ev
	}
	e, err := a.EventByID(l.Topics[0])
	if err != nil {
		return ev
	}
	ev.Name = e.Name
	if err := a.UnpackIntoMap(ev.Args, e.Name, l.Data); err != nil {
		return ev
	}
	var indexed abi.Arguments
	for _, in := range e.Inputs {
		if in.Indexed {
			indexed = append(indexed, in)
		}
	}
	_ = abi.ParseTopicsIntoMap(ev.Args, indexed, l.Topics[1:])
	return ev
}

// Find returns the first event of a receipt with the given name, or nil.
func (p *Protocol) Find(rc *types.Receipt, name string) *Event {
	for _, e := range p.Events(rc) {
		if e.Name == name {
			return &e
		}
	}
	return nil
}

// FindAll returns every event of a receipt with the given name.
func (p *Protocol) FindAll(rc *types.Receipt, name string) []Event {
	var out []Event
	for _, e := range p.Events(rc) {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}
