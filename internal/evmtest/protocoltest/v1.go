package protocoltest

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// V1TTLs are the TTLs DeployV1 sets an IV for (the V1 market refuses others
// with IVNotSet).
var V1TTLs = []uint64{600, 3600, 4 * 3600, 24 * 3600}

// DeployV1 adds the V1 stack on the same position manager and prime pool:
// a V1 handler (whitelisted, its app the position manager) and a V1 market
// paired with it, the prime pool approved, an IV set for V1TTLs.
func (p *Protocol) DeployV1() {
	c := p.Chain
	p.HandlerV1 = c.Deploy(HandlerV1, p.Factory, p.Router)
	p.MarketV1 = c.Deploy(MarketV1, p.PositionManager, p.CallAsset, p.PutAsset, p.Pool)
	p.register(p.HandlerV1, HandlerV1.ABI)
	p.register(p.MarketV1, MarketV1.ABI)
	c.MustSend(p.Owner, p.PositionManager, PositionManager.ABI, "updateWhitelistHandler", p.HandlerV1, true)
	c.MustSend(p.Owner, p.HandlerV1, HandlerV1.ABI, "updateWhitelistedApps", p.PositionManager, true)
	p.WhitelistApp(p.HandlerV1, p.MarketV1, true)
	p.ApprovePool(p.MarketV1, p.Pool, true)
	ttls, ivs := make([]*big.Int, len(V1TTLs)), make([]*big.Int, len(V1TTLs))
	for i, ttl := range V1TTLs {
		ttls[i], ivs[i] = new(big.Int).SetUint64(ttl), big.NewInt(50)
	}
	c.MustSend(p.Owner, p.MarketV1, MarketV1.ABI, "updateIVs", ttls, ivs)
	for _, a := range c.Accounts {
		for _, tok := range []common.Address{p.CallAsset, p.PutAsset} {
			c.MustSend(a, tok, Token.ABI, "approve", p.MarketV1, maxUint)
		}
	}
}

func (p *Protocol) normV1(r Range) Range { return p.fill(r, p.HandlerV1) }

// TokenIDV1 is a V1 handler's id of a range: keccak256(abi.encode(handler, pool, tickLower, tickUpper)).
func (p *Protocol) TokenIDV1(r Range) *big.Int {
	r = p.normV1(r)
	enc, _ := args(tAddress, tAddress, tInt24, tInt24).Pack(r.Handler, r.Pool, bi(r.TickLower), bi(r.TickUpper))
	return new(big.Int).SetBytes(crypto.Keccak256(enc))
}

func positionDataV1(r Range, amount *big.Int) []byte {
	enc, err := args(tAddress, tInt24, tInt24, tUint128).Pack(r.Pool, bi(r.TickLower), bi(r.TickUpper), amount)
	if err != nil {
		panic(err)
	}
	return enc
}

// DepositV1 mints V1 handler liquidity (four-word payload, no hook).
func (p *Protocol) DepositV1(lp *Account, r Range, liquidity *big.Int) (*big.Int, *big.Int, error) {
	r = p.normV1(r)
	rc, err := p.Chain.Send(lp, p.PositionManager, PositionManager.ABI, "mintPosition", r.Handler, positionDataV1(r, liquidity))
	if err != nil || rc == nil {
		return nil, nil, err
	}
	ev := p.Find(rc, "LogMintPosition")
	return ev.Args["tokenId"].(*big.Int), ev.Args["sharesMinted"].(*big.Int), nil
}

// RangeInfoV1 reads a V1 handler's 12-field tokenIds of a range; the
// ReservedLiquidity field stays nil.
func (p *Protocol) RangeInfoV1(r Range) TokenIdInfo {
	r = p.normV1(r)
	return tokenIdInfo(p.Chain.Call(r.Handler, HandlerV1.ABI, "tokenIds", p.TokenIDV1(r)))
}

type optionTicksV1 struct {
	Handler        common.Address
	Pool           common.Address
	TickLower      *big.Int
	TickUpper      *big.Int
	LiquidityToUse *big.Int
}

// BuyV1 mints a V1 option (legs' hooks ignored; TTL must be one of V1TTLs).
func (p *Protocol) BuyV1(buyer *Account, o Option) (*big.Int, *types.Receipt, error) {
	ticks := make([]optionTicksV1, len(o.Legs))
	for i, l := range o.Legs {
		r := p.normV1(l.Range)
		ticks[i] = optionTicksV1{r.Handler, r.Pool, bi(r.TickLower), bi(r.TickUpper), l.Liquidity}
	}
	return mintOption(p, buyer, p.MarketV1, MarketV1.ABI, ticks, o)
}

// ExerciseV1 calls the V1 market's exerciseOption (every leg swaps, zero included).
func (p *Protocol) ExerciseV1(sender *Account, id *big.Int, legs []ExerciseLeg) (*types.Receipt, error) {
	return p.Chain.Send(sender, p.MarketV1, MarketV1.ABI, "exerciseOption", ExerciseArgs(id, legs))
}
