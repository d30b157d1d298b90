package chain

import (
	"context"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
)

// Periphery are the contracts a market names beside its pool and assets,
// as its public getters answer them now (set by updateAddress, so never
// cached): the fee strategy, the option pricing and the option NFTs'
// token URI fetcher. A getter that reverts or is absent (a V1 market has
// no feeStrategy) gives the zero address.
type Periphery struct {
	FeeStrategy, OptionPricing, TokenURIFetcher common.Address
}

// peripheryGetters are the three getters' selectors, in Periphery's order.
var peripheryGetters = [3][]byte{
	crypto.Keccak256([]byte("feeStrategy()"))[:4],
	crypto.Keccak256([]byte("optionPricing()"))[:4],
	crypto.Keccak256([]byte("tokenURIFetcher()"))[:4],
}

// MarketsPeriphery reads every market's periphery in one aggregate3 (each
// getter allowed to fail), at the answer's block.
func (r *Reader) MarketsPeriphery(ctx context.Context, markets []common.Address) ([]Periphery, error) {
	if len(markets) == 0 {
		return nil, nil
	}
	calls := make([]Call, 0, 3*len(markets))
	for _, m := range markets {
		for _, sel := range peripheryGetters {
			calls = append(calls, Call{Target: m, Data: sel})
		}
	}
	res, err := r.AggregateResults(ctx, calls)
	if err != nil {
		return nil, err
	}
	out := make([]Periphery, len(markets))
	for i := range markets {
		out[i] = Periphery{
			FeeStrategy:     addressWord(res[3*i]),
			OptionPricing:   addressWord(res[3*i+1]),
			TokenURIFetcher: addressWord(res[3*i+2]),
		}
	}
	return out, nil
}

// addressWord is an address getter's answer: the zero address unless the
// call succeeded with one word whose upper 12 bytes are zero.
func addressWord(res Result) common.Address {
	if !res.OK || len(res.Data) != 32 || common.BytesToAddress(res.Data[:12]) != (common.Address{}) {
		return common.Address{}
	}
	return common.BytesToAddress(res.Data[12:])
}
