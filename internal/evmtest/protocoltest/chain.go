package protocoltest

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/ethclient/simulated"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/testenv/testclock"
)

// ChainID is the simulated backend's chain id.
const ChainID = 1337

// Account is a funded key on the simulated chain.
type Account struct {
	Key  *ecdsa.PrivateKey
	Addr common.Address
	opts *bind.TransactOpts
}

// Chain is a simulated EVM whose accounts are derived from fixed keys, so
// contract addresses (and with them the token order in a pool) are the same
// on every run.
type Chain struct {
	T        testing.TB
	Backend  *simulated.Backend
	Accounts []*Account // Accounts[0] deploys and owns everything
	// AutoCommit mines a block after every transaction (the default). With
	// it off, transactions wait in the pool until Commit: several in one block.
	AutoCommit bool
	pending    []common.Hash
	// sent counts each account's transactions waiting for the block: the
	// pool's pending nonce may not count them yet when the next is signed.
	sent map[common.Address]uint64
}

// NewChain starts a simulated chain with n funded accounts (at least one).
// Options change the node after the defaults (Archive, a genesis time, an
// HTTP endpoint): cmd/clamm-sandbox serves the chain this way.
func NewChain(t testing.TB, n int, options ...NodeOption) *Chain {
	t.Helper()
	if n < 1 {
		n = 1
	}
	alloc := types.GenesisAlloc{}
	eth := new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)
	c := &Chain{T: t, AutoCommit: true}
	for i := 0; i < n; i++ {
		key, err := crypto.ToECDSA(crypto.Keccak256([]byte(fmt.Sprintf("protocoltest account %d", i))))
		if err != nil {
			t.Fatal(err)
		}
		a := &Account{Key: key, Addr: crypto.PubkeyToAddress(key.PublicKey)}
		a.opts, err = bind.NewKeyedTransactorWithChainID(key, big.NewInt(ChainID))
		if err != nil {
			t.Fatal(err)
		}
		alloc[a.Addr] = types.Account{Balance: eth}
		c.Accounts = append(c.Accounts, a)
	}
	genesis, err := testclock.Genesis()
	if err != nil {
		t.Fatal(err)
	}
	options = append([]NodeOption{simulated.WithBlockGasLimit(200_000_000), atTime(genesis)}, options...)
	c.Backend = simulated.NewBackend(alloc, options...)
	t.Cleanup(func() { c.Backend.Close() })
	return c
}

// NodeOption changes the simulated node's configuration before it starts.
type NodeOption = func(*node.Config, *ethconfig.Config)

// atTime starts the chain at a genesis timestamp (see testclock.Variable).
func atTime(genesis uint64) NodeOption {
	return func(_ *node.Config, c *ethconfig.Config) { c.Genesis.Timestamp = genesis }
}

// AtTime starts the chain at genesis (unix seconds) instead of the test
// clock's day.
func AtTime(genesis uint64) NodeOption { return atTime(genesis) }

// Archive keeps the state of every block. The simulated node keeps only
// the last 128 blocks' state by default, so an indexer reading a longer
// history's eth_calls at their blocks fails ("no state at block ...").
func Archive(_ *node.Config, c *ethconfig.Config) {
	c.NoPruning = true
	c.StateScheme = rawdb.HashScheme
}

// Client is the simulated node's client.
func (c *Chain) Client() simulated.Client { return c.Backend.Client() }

// RPC is the simulated node's JSON-RPC client (what the gateway's chain
// reader and quoters take). The backend's client wraps an *ethclient.Client
// in an embedded field named Client, which hides the method of that name:
// reach it through the field.
func (c *Chain) RPC() *rpc.Client {
	ec := reflect.ValueOf(c.Backend.Client()).FieldByName("Client").Interface().(*ethclient.Client)
	return ec.Client()
}

// Commit mines the pending transactions into a block.
func (c *Chain) Commit() { c.Backend.Commit() }

// AdjustTime moves the clock of the next block forward and mines it.
//
// The simulated node refuses while its transaction pool still lists a
// transaction as pending, and the pool forgets a mined transaction only
// when its own loop has seen the new head, after Commit has returned: on a
// loaded machine that takes a while, so the refusal is retried (for at
// most ten seconds; every transaction sent here was mined first).
func (c *Chain) AdjustTime(d time.Duration) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Backend.AdjustTime(d)
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "non-empty block") || time.Now().After(deadline) {
			c.T.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.Backend.Commit()
}

// Now is the timestamp of the latest block.
func (c *Chain) Now() uint64 {
	h, err := c.Client().HeaderByNumber(context.Background(), nil)
	if err != nil {
		c.T.Fatal(err)
	}
	return h.Time
}

// Deploy deploys an artifact from Accounts[0].
func (c *Chain) Deploy(a Artifact, args ...any) common.Address {
	c.T.Helper()
	opts := *c.Accounts[0].opts
	opts.GasLimit = 16_000_000 // under the per-transaction cap (2^24) of recent forks
	addr, tx, _, err := bind.DeployContract(&opts, a.ABI, a.Bytecode, c.Client(), args...)
	if err != nil {
		c.T.Fatalf("deploy %s: %v", a.Name, err)
	}
	c.Backend.Commit()
	c.mustSucceed(tx.Hash())
	return addr
}

// RevertError is a transaction refused by the EVM, with its revert data
// decoded against the protocol's custom errors where one matches.
type RevertError struct {
	Method string
	Name   string // custom error name ("DopexV2OptionMarket__NotEnoughAfterSwap"), "Error(string)" message, or ""
	Data   []byte
	Err    error
}

func (e *RevertError) Error() string {
	return fmt.Sprintf("%s reverted: %s (%v)", e.Method, e.Name, e.Err)
}

// IsRevert reports whether err is a revert whose name contains name.
func IsRevert(err error, name string) bool {
	var r *RevertError
	return errors.As(err, &r) && strings.Contains(r.Name, name)
}

// Send simulates the call first (so a revert comes back decoded), then
// sends it as a transaction from `from` and, with AutoCommit, mines it and
// returns its receipt (nil without AutoCommit).
func (c *Chain) Send(from *Account, to common.Address, a abi.ABI, method string, args ...any) (*types.Receipt, error) {
	c.T.Helper()
	data, err := a.Pack(method, args...)
	if err != nil {
		c.T.Fatalf("pack %s: %v", method, err)
	}
	return c.SendRaw(from, to, data, method)
}

// SendRaw is Send with calldata already encoded.
func (c *Chain) SendRaw(from *Account, to common.Address, data []byte, label string) (*types.Receipt, error) {
	c.T.Helper()
	ctx := context.Background()
	msg := ethereum.CallMsg{From: from.Addr, To: &to, Data: data}
	if c.AutoCommit {
		if _, err := c.Client().CallContract(ctx, msg, nil); err != nil {
			return nil, decodeRevert(label, err)
		}
	}
	opts := *from.opts
	opts.GasLimit = 16_000_000
	if !c.AutoCommit {
		n, err := c.Client().NonceAt(ctx, from.Addr, nil)
		if err != nil {
			c.T.Fatal(err)
		}
		opts.Nonce = new(big.Int).SetUint64(n + c.sent[from.Addr])
		c.sent[from.Addr]++
	}
	bound := bind.NewBoundContract(to, abi.ABI{}, c.Client(), c.Client(), c.Client())
	tx, err := bound.RawTransact(&opts, data)
	if err != nil {
		return nil, decodeRevert(label, err)
	}
	if !c.AutoCommit {
		c.pending = append(c.pending, tx.Hash())
		return nil, nil
	}
	c.Backend.Commit()
	r, err := c.Client().TransactionReceipt(ctx, tx.Hash())
	if err != nil {
		c.T.Fatal(err)
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return r, &RevertError{Method: label, Err: errors.New("transaction failed after a successful simulation")}
	}
	return r, nil
}

// MustSend is Send failing the test on any error.
func (c *Chain) MustSend(from *Account, to common.Address, a abi.ABI, method string, args ...any) *types.Receipt {
	c.T.Helper()
	r, err := c.Send(from, to, a, method, args...)
	if err != nil {
		c.T.Fatal(err)
	}
	return r
}

// Call runs a view call at the latest block and unpacks its results.
func (c *Chain) Call(to common.Address, a abi.ABI, method string, args ...any) []any {
	c.T.Helper()
	out, err := c.TryCall(c.Accounts[0].Addr, to, a, method, args...)
	if err != nil {
		c.T.Fatal(err)
	}
	return out
}

// TryCall is Call from `from`, returning a decoded revert instead of failing.
func (c *Chain) TryCall(from, to common.Address, a abi.ABI, method string, args ...any) ([]any, error) {
	data, err := a.Pack(method, args...)
	if err != nil {
		c.T.Fatalf("pack %s: %v", method, err)
	}
	out, err := c.Client().CallContract(context.Background(), ethereum.CallMsg{From: from, To: &to, Data: data}, nil)
	if err != nil {
		return nil, decodeRevert(method, err)
	}
	return a.Unpack(method, out)
}

// TryCallAt is TryCall at block n: what a getter answered then.
func (c *Chain) TryCallAt(from, to common.Address, n uint64, a abi.ABI, method string, args ...any) ([]any, error) {
	data, err := a.Pack(method, args...)
	if err != nil {
		c.T.Fatalf("pack %s: %v", method, err)
	}
	out, err := c.Client().CallContract(context.Background(), ethereum.CallMsg{From: from, To: &to, Data: data}, new(big.Int).SetUint64(n))
	if err != nil {
		return nil, decodeRevert(method, err)
	}
	return a.Unpack(method, out)
}

func (c *Chain) mustSucceed(h common.Hash) {
	r, err := c.Client().TransactionReceipt(context.Background(), h)
	if err != nil || r.Status != types.ReceiptStatusSuccessful {
		c.T.Fatalf("transaction %s failed: %v", h, err)
	}
}

// decodeRevert names the revert of a simulated call: a custom error of any
// protocol contract, Error(string), or Panic(uint256).
func decodeRevert(method string, err error) error {
	re := &RevertError{Method: method, Err: err}
	var de rpc.DataError
	if errors.As(err, &de) {
		if s, ok := de.ErrorData().(string); ok {
			re.Data = common.FromHex(s)
		}
	}
	if len(re.Data) >= 4 {
		re.Name = errorName(re.Data)
	}
	if re.Name == "" {
		re.Name = err.Error()
	}
	return re
}

// Block runs fn with AutoCommit off, so every transaction fn sends lands in
// one block, mines it and returns the receipts in sending order (failed
// transactions included: check Status). Sends inside fn return nil
// receipts and are not simulated first.
func (c *Chain) Block(fn func()) []*types.Receipt {
	c.T.Helper()
	c.AutoCommit, c.pending, c.sent = false, nil, map[common.Address]uint64{}
	defer func() { c.AutoCommit = true }()
	fn()
	c.awaitPending()
	c.Backend.Commit()
	var out []*types.Receipt
	for _, h := range c.pending {
		r, err := c.Client().TransactionReceipt(context.Background(), h)
		if err != nil {
			c.T.Fatal(err)
		}
		out = append(out, r)
	}
	c.pending = nil
	return out
}

// awaitPending waits until the pool holds every transaction Block's fn
// sent as executable: the pool promotes an account's next nonce in its own
// loop, and a block sealed before that leaves the transaction out (at most
// ten seconds, as AdjustTime).
func (c *Chain) awaitPending() {
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for addr, n := range c.sent {
		for {
			mined, err := c.Client().NonceAt(ctx, addr, nil)
			if err != nil {
				c.T.Fatal(err)
			}
			pending, err := c.Client().PendingNonceAt(ctx, addr)
			if err != nil {
				c.T.Fatal(err)
			}
			if pending >= mined+n {
				break
			}
			if time.Now().After(deadline) {
				c.T.Fatalf("the pool holds %d of %s's %d transactions", pending-mined, addr, n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// BlockNumber is the number of the latest block.
func (c *Chain) BlockNumber() uint64 {
	n, err := c.Client().BlockNumber(context.Background())
	if err != nil {
		c.T.Fatal(err)
	}
	return n
}
