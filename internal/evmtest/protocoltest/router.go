package protocoltest

import (
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// The router and the smart wallet (sol/Routers.sol).
var (
	ClammRouter = mustOwn("TestClammRouterV2")
	SmartWallet = mustOwn("TestSmartWallet")
)

// DeployRouter deploys a ClammRouterV2 stand-in routing deposits to the
// protocol's position manager; every funded account approves it for both
// assets, as the frontend asks a buyer or a depositor to.
func (p *Protocol) DeployRouter() common.Address {
	c := p.Chain
	r := c.Deploy(ClammRouter)
	p.register(r, ClammRouter.ABI)
	c.MustSend(c.Accounts[0], r, ClammRouter.ABI, "setDopexV2PositionManager", p.PositionManager)
	for _, a := range c.Accounts {
		for _, tok := range []common.Address{p.CallAsset, p.PutAsset} {
			c.MustSend(a, tok, Token.ABI, "approve", r, maxUint)
		}
	}
	return r
}

// BuyVia buys through the router (mintOption on the V2 market, or the V1
// market with v1 set): the market mints to the router, which hands the
// option to receiver. maxCost is pulled from the buyer and the rest
// refunded, so it must be set (o.MaxCost).
func (p *Protocol) BuyVia(router common.Address, buyer *Account, receiver common.Address, o Option, v1 bool) (*big.Int, *types.Receipt, error) {
	if o.MaxCost == nil {
		return nil, nil, fmt.Errorf("BuyVia needs Option.MaxCost: the router pulls it from the buyer")
	}
	var rc *types.Receipt
	var err error
	if v1 {
		ticks := make([]optionTicksV1, len(o.Legs))
		for i, l := range o.Legs {
			r := p.normV1(l.Range)
			ticks[i] = optionTicksV1{r.Handler, r.Pool, bi(r.TickLower), bi(r.TickUpper), l.Liquidity}
		}
		rc, err = p.Chain.Send(buyer, router, ClammRouter.ABI, "mintOptionV1", optionParams(ticks, o), p.MarketV1, receiver, [32]byte{}, [32]byte{})
	} else {
		ticks := make([]optionTicks, len(o.Legs))
		for i, l := range o.Legs {
			r := p.norm(l.Range)
			ticks[i] = optionTicks{r.Handler, r.Pool, r.Hook, bi(r.TickLower), bi(r.TickUpper), l.Liquidity}
		}
		rc, err = p.Chain.Send(buyer, router, ClammRouter.ABI, "mintOption", optionParams(ticks, o), p.Market, receiver, [32]byte{}, [32]byte{})
	}
	if err != nil || rc == nil {
		return nil, rc, err
	}
	return p.Find(rc, "LogMintOption").Args["tokenId"].(*big.Int), rc, nil
}

type optionParamsT[T any] struct {
	OptionTicks      []T
	TickLower        *big.Int
	TickUpper        *big.Int
	Ttl              *big.Int
	IsCall           bool
	MaxCostAllowance *big.Int
}

func optionParams[T any](ticks []T, o Option) optionParamsT[T] {
	return optionParamsT[T]{ticks, bi(o.TickLower), bi(o.TickUpper), new(big.Int).SetUint64(o.TTL), o.IsCall, o.MaxCost}
}

// DeployWallet deploys a smart wallet owned by owner's key.
func (p *Protocol) DeployWallet(owner *Account) common.Address {
	w := p.Chain.Deploy(SmartWallet, owner.Addr)
	p.register(w, SmartWallet.ABI)
	return w
}

// WalletExercise has owner's key make the wallet call exerciseOption on
// market: the wallet is the market's msg.sender (and the option's owner),
// the key the transaction's sender.
func (p *Protocol) WalletExercise(owner *Account, wallet, market common.Address, id *big.Int, legs []ExerciseLeg) (*types.Receipt, error) {
	data, err := MarketV2.ABI.Pack("exerciseOption", ExerciseArgs(id, legs))
	if err != nil {
		return nil, err
	}
	return p.Chain.Send(owner, wallet, SmartWallet.ABI, "execute", market, data)
}

// DepositVia deposits liquidity into range r (V2 handler) through the
// router's mintPosition from lp: the position manager mints the shares to
// the router, which hands them to receiver. It returns the receipt.
func (p *Protocol) DepositVia(router common.Address, lp *Account, receiver common.Address, r Range, liquidity *big.Int) (*types.Receipt, error) {
	r = p.norm(r)
	return p.Chain.Send(lp, router, ClammRouter.ABI, "mintPosition", r.Handler, positionData(r, liquidity), receiver, [32]byte{}, [32]byte{})
}
