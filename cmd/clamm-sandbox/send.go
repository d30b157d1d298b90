package main

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"strings"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
)

// preparedTx is a transaction as the gateway's prepare routes give it.
type preparedTx struct {
	To    common.Address `json:"to"`
	Data  hexutil.Bytes  `json:"data"`
	Value *hexutil.Big   `json:"value,omitempty"`
}

// prepared is what send reads of a prepare route's answer: the
// transaction, and the approvals to send first (purchase: `approval`,
// deposit: `approvals`).
type prepared struct {
	Tx       *preparedTx `json:"tx"`
	Approval *struct {
		Tx *preparedTx `json:"tx"`
	} `json:"approval"`
	Approvals []struct {
		Tx *preparedTx `json:"tx"`
	} `json:"approvals"`
}

// runSend signs the prepared transaction read from in (a prepare
// route's JSON answer) with -key and sends it to -rpc, its approvals
// first, each waited for until mined. What `cast send` would do with the
// answer's tx.to and tx.data, for a machine without Foundry.
func runSend(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("clamm-sandbox send", flag.ContinueOnError)
	rpcURL := fs.String("rpc", "http://127.0.0.1:8545", "the chain's JSON-RPC URL")
	keyHex := fs.String("key", "", "the sender's private key (0x + 64 hex digits; the sandbox prints its accounts')")
	if err := fs.Parse(args); err != nil {
		return err
	}
	key, err := crypto.HexToECDSA(strings.TrimPrefix(*keyHex, "0x"))
	if err != nil {
		return fmt.Errorf("-key: %w", err)
	}
	var p prepared
	if err := json.NewDecoder(io.LimitReader(in, 1<<20)).Decode(&p); err != nil {
		return fmt.Errorf("reading the prepared answer from stdin: %w", err)
	}
	if p.Tx == nil {
		return errors.New("the answer on stdin has no tx (an error answer? it is a prepare route's JSON that send takes)")
	}
	txs := []*preparedTx{}
	if p.Approval != nil && p.Approval.Tx != nil {
		txs = append(txs, p.Approval.Tx)
	}
	for _, a := range p.Approvals {
		if a.Tx != nil {
			txs = append(txs, a.Tx)
		}
	}
	c, err := ethclient.DialContext(ctx, *rpcURL)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, tx := range append(txs, p.Tx) {
		if err := sendOne(ctx, c, key, tx, out); err != nil {
			return err
		}
	}
	return nil
}

// sendOne signs tx as an EIP-1559 transaction at the node's fees and
// sends it, then waits (up to a minute) for its receipt.
func sendOne(ctx context.Context, c *ethclient.Client, key *ecdsa.PrivateKey, ptx *preparedTx, out io.Writer) error {
	from := crypto.PubkeyToAddress(key.PublicKey)
	value := new(big.Int)
	if ptx.Value != nil {
		value = ptx.Value.ToInt()
	}
	chainID, err := c.ChainID(ctx)
	if err != nil {
		return err
	}
	nonce, err := c.PendingNonceAt(ctx, from)
	if err != nil {
		return err
	}
	gas, err := c.EstimateGas(ctx, ethereum.CallMsg{From: from, To: &ptx.To, Data: ptx.Data, Value: value})
	if err != nil {
		return fmt.Errorf("to %s: %w", ptx.To, err)
	}
	tip, err := c.SuggestGasTipCap(ctx)
	if err != nil {
		return err
	}
	head, err := c.HeaderByNumber(ctx, nil)
	if err != nil {
		return err
	}
	feeCap := new(big.Int).Add(tip, new(big.Int).Mul(head.BaseFee, big.NewInt(2)))
	tx, err := types.SignNewTx(key, types.LatestSignerForChainID(chainID), &types.DynamicFeeTx{
		ChainID: chainID, Nonce: nonce, GasTipCap: tip, GasFeeCap: feeCap, Gas: gas * 6 / 5, To: &ptx.To, Value: value, Data: ptx.Data,
	})
	if err != nil {
		return err
	}
	if err := c.SendTransaction(ctx, tx); err != nil {
		return err
	}
	fmt.Fprintf(out, "sent %s to %s from %s\n", tx.Hash().Hex(), ptx.To.Hex(), from.Hex())
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rc, err := bind.WaitMined(wctx, c, tx)
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", tx.Hash().Hex(), err)
	}
	if rc.Status != types.ReceiptStatusSuccessful {
		return fmt.Errorf("%s reverted in block %d", tx.Hash().Hex(), rc.BlockNumber)
	}
	fmt.Fprintf(out, "mined in block %d\n", rc.BlockNumber)
	return nil
}
