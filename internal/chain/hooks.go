package chain

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// HookQuestion asks whether Hook would let Market use a range behind it
// now, for an option of TTL seconds on Pool's range
// [TickLower, TickUpper).
type HookQuestion struct {
	Hook, Market, Pool   common.Address
	TTL                  uint64
	TickLower, TickUpper int
	// IsPut asks about a put (the hook data's isCall false); the zero
	// value asks about a call.
	IsPut bool
}

// HookAnswer is a hook's answer to a HookQuestion.
type HookAnswer struct {
	// Deployed: the address holds a hook (it answered owner() with a word).
	Deployed bool
	// Admits: onPositionUse accepted the hook data mintOption would send.
	Admits bool
}

// hookDataArgs is DopexV2OptionMarketV2.mintOption's hook data:
// abi.encode(address(this), ttl, isCall, pool, tickLower, tickUpper).
var hookDataArgs = func() abi.Arguments {
	ty := func(s string) abi.Type {
		t, err := abi.NewType(s, "", nil)
		if err != nil {
			panic(err)
		}
		return t
	}
	return abi.Arguments{{Type: ty("address")}, {Type: ty("uint256")}, {Type: ty("bool")}, {Type: ty("address")}, {Type: ty("int24")}, {Type: ty("int24")}}
}()

// ProbeHooks asks every hook its question in one round trip, as a static
// call of onPositionUse with the hook data the market's mintOption sends
// (which the handler passes on unchanged). The bounded-TTL hooks decode
// (app, ttl) from it and revert unless the app (the market) is in their
// private whitelistedApps and the ttl within bounds; other hooks apply
// their own rules (weekday, implied volatility) as they would for a real
// purchase now. Hooks take no caller check, so the call from ChainedRead
// sees what the handler's would. Each hook is also asked owner(): an
// address without code "accepts" every call, and is not a hook.
func (r *Reader) ProbeHooks(ctx context.Context, qs []HookQuestion) ([]HookAnswer, error) {
	if len(qs) == 0 {
		return nil, nil
	}
	calls := make([]contracts.ChainedCall, 0, 2*len(qs))
	for _, q := range qs {
		data, err := hookDataArgs.Pack(q.Market, new(big.Int).SetUint64(q.TTL), !q.IsPut, q.Pool, big.NewInt(int64(q.TickLower)), big.NewInt(int64(q.TickUpper)))
		if err != nil {
			return nil, fmt.Errorf("hook data: %w", err)
		}
		calls = append(calls,
			contracts.ChainedCall{Target: q.Hook, Data: pack(contracts.Hook, "owner")},
			contracts.ChainedCall{Target: q.Hook, Data: pack(contracts.Hook, "onPositionUse", data)})
	}
	res, err := r.chainedReadOrRounds(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := make([]HookAnswer, len(qs))
	for i := range qs {
		owner, use := res[2*i], res[2*i+1]
		out[i].Deployed = owner.OK && len(owner.Data) == 32
		out[i].Admits = out[i].Deployed && use.OK
	}
	return out, nil
}
