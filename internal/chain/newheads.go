package chain

import (
	"context"
	"errors"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
)

// wsHead is what a newHeads notification carries that a head needs.
type wsHead struct {
	Number    *hexutil.Big   `json:"number"`
	Hash      common.Hash    `json:"hash"`
	Timestamp hexutil.Uint64 `json:"timestamp"`
}

// NewHeads follows a node's heads over its WebSocket RPC URL
// (eth_subscribe "newHeads", which Geth, Erigon, Nethermind, Reth and
// anvil serve) and calls onHead with each, until ctx ends or the
// subscription fails: it returns then, and its caller dials again. Its
// errors never hold the URL, which may carry a key.
func NewHeads(ctx context.Context, url string, onHead func(block.Ref)) error {
	c, err := rpc.DialContext(ctx, url)
	if err != nil {
		return errors.New("newHeads: dialling the WebSocket RPC URL failed")
	}
	defer c.Close()
	ch := make(chan wsHead, 16)
	sub, err := c.EthSubscribe(ctx, ch, "newHeads")
	if err != nil {
		return errors.New("newHeads: " + withoutURL(err, url))
	}
	defer sub.Unsubscribe()
	for {
		select {
		case h := <-ch:
			if h.Number != nil {
				onHead(block.Ref{Number: h.Number.ToInt().Uint64(), Hash: strings.ToLower(h.Hash.Hex()), Timestamp: int64(h.Timestamp)})
			}
		case err := <-sub.Err():
			if err == nil {
				err = errors.New("the subscription ended")
			}
			return errors.New("newHeads: " + withoutURL(err, url))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// withoutURL is err's text with url left out.
func withoutURL(err error, url string) string {
	return strings.ReplaceAll(err.Error(), url, "<the WebSocket RPC URL>")
}
