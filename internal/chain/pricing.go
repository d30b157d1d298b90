package chain

import (
	"context"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/clamm-gateway/clamm-gateway/internal/contracts"
)

// ReadPricing asks the market what it would charge for each ask, in one
// eth_call at one block (contracts.PricingRead's creation code, sent
// without `to`), from user when not zero: a pricing contract may read
// tx.origin (OptionPricingLinearV2_1's xSYK discount), so a quote is the
// user's own. A market that does not answer primePool(),
// getCurrentPricePerCallAsset, putAssetDecimals() or the assets makes the
// whole read revert: a *RevertError.
func (r *Reader) ReadPricing(ctx context.Context, market, user common.Address, asks []contracts.PricingAsk) (contracts.PricingHead, []contracts.PricingAnswer, error) {
	data, err := contracts.PricingReadCode(market, user, asks)
	if err != nil {
		return contracts.PricingHead{}, nil, err
	}
	arg := map[string]any{"data": hexutil.Bytes(data)} // no "to": the node runs the code
	if user != (common.Address{}) {
		arg["from"] = user
	}
	out, err := r.ethCallRaw(ctx, arg)
	if err != nil {
		return contracts.PricingHead{}, nil, err
	}
	h, answers, err := contracts.UnpackPricingRead(out)
	if err != nil {
		return h, nil, upstreamGarbage(fmt.Errorf("unpack PricingRead: %w", err))
	}
	if len(answers) != len(asks) {
		return h, nil, upstreamGarbage(fmt.Errorf("PricingRead returned %d answers for %d asks", len(answers), len(asks)))
	}
	return h, answers, nil
}

// SimulateCall runs data from `from` to `to` at the latest block. A revert
// is a *RevertError with its reason decoded; a node failure is an upstream
// problem.
func (r *Reader) SimulateCall(ctx context.Context, from, to common.Address, data []byte) ([]byte, error) {
	arg := map[string]any{"to": to, "data": hexutil.Bytes(data)}
	if from != (common.Address{}) {
		arg["from"] = from
	}
	return r.ethCallRaw(ctx, arg)
}

// ethCallRaw is one eth_call within the call deadline: a revert comes back
// as a *RevertError, any other failure classified into the problem
// vocabulary.
func (r *Reader) ethCallRaw(ctx context.Context, arg map[string]any) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var out hexutil.Bytes
	if err := r.rpc.CallContext(ctx, &out, "eth_call", arg, "latest"); err != nil {
		if rev, ok := asRevert(err); ok {
			return nil, rev
		}
		return nil, classify(err)
	}
	return out, nil
}
