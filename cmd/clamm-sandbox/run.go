package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// options are the sandbox's flags.
type options struct {
	rpc, listen, gateway string
	block, ready         time.Duration
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("clamm-sandbox", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.rpc, "rpc", "127.0.0.1:8545", "where the chain's JSON-RPC listens (port 0: any free port)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "where the gateway listens (port 0: any free port)")
	fs.StringVar(&o.gateway, "gateway", "", `the clamm-gateway binary to start (default: go build ./cmd/clamm-gateway); "none" starts only the chain`)
	fs.DurationVar(&o.block, "block-time", time.Second, "how often a block is mined")
	fs.DurationVar(&o.ready, "ready-timeout", 5*time.Minute, "how long the gateway may take to index the history")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.block <= 0 {
		return o, fmt.Errorf("-block-time %s: want a positive duration", o.block)
	}
	return o, nil
}

// Sandbox is a running sandbox, handed to started (the test's hook)
// once the gateway has indexed the history.
type Sandbox struct {
	Protocol *pt.Protocol
	History  *history
	RPCURL   string
	Gateway  string // the gateway's base URL; "" with -gateway none
}

// run starts the sandbox and serves until ctx ends. started, if not nil,
// is called once everything is up (tests).
func run(ctx context.Context, args []string, stdout, stderr io.Writer, started func(*Sandbox)) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := ensureArtifacts(stderr); err != nil {
		return err
	}
	t := &tb{log: stderr}
	defer t.close()
	dir, err := os.MkdirTemp("", "clamm-sandbox-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := o.gateway
	if bin == "" {
		if bin, err = buildGateway(ctx, dir, stderr); err != nil {
			return err
		}
	}
	sb, err := startChain(o, t, stderr)
	if err != nil {
		return err
	}
	m := mine(ctx, sb.Protocol, o.block)
	defer m.stop()
	fmt.Fprintf(stdout, "chain %d: %s (an archive node: every block's state; a block every %s; head %d after the history)\n",
		pt.ChainID, sb.RPCURL, o.block, sb.History.Head)
	ahead := time.Until(time.Unix(int64(sb.Protocol.Chain.Now()), 0)).Round(time.Minute)
	fmt.Fprintf(stdout, "the chain's clock runs %s ahead of the wall clock (the history moved it forward; options expire by the chain's clock)\n", ahead)
	if bin != "none" {
		g, err := sb.gateway(ctx, o, bin, dir, stdout, stderr)
		if err != nil {
			return err
		}
		defer g.stop()
	}
	printKeys(ctx, stdout, sb)
	if started != nil {
		started(sb)
	}
	<-ctx.Done()
	return nil
}

// startChain deploys the protocol on a new archive chain served on
// o.rpc and plays the history.
func startChain(o options, t *tb, stderr io.Writer) (*Sandbox, error) {
	addr, err := freeAddr(o.rpc)
	if err != nil {
		return nil, err
	}
	serve, err := served(addr)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	sb := &Sandbox{RPCURL: "http://" + addr}
	fmt.Fprintf(stderr, "clamm-sandbox: deploying Uniswap V3 and the test protocol, then playing the history (a few seconds)\n")
	err = catch(func() {
		sb.Protocol = pt.Deploy(t, pt.Config{Users: accounts - 1,
			Node: []pt.NodeOption{pt.Archive, pt.AtTime(uint64(now.Add(-historyStart).Unix())), serve}})
		sb.History = play(sb.Protocol, now)
	})
	return sb, err
}

// gateway builds the gateway's configuration, starts it and waits until
// it has indexed the history.
func (sb *Sandbox) gateway(ctx context.Context, o options, bin, dir string, stdout, stderr io.Writer) (*gatewayProc, error) {
	cfgFile := filepath.Join(dir, "sandbox-config.json")
	raw, err := json.MarshalIndent(gatewayConfig(sb.Protocol, sb.History), "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(cfgFile, raw, 0o644); err != nil {
		return nil, err
	}
	environ := env(sb.RPCURL, o.listen, cfgFile, filepath.Join(dir, "index"), sb.Protocol)
	fmt.Fprintln(stdout, "starting the gateway with:")
	for _, kv := range environ {
		fmt.Fprintln(stdout, "  "+kv)
	}
	g, err := startGateway(bin, environ, stdout, stderr)
	if err != nil {
		return nil, err
	}
	sb.Gateway = "http://" + g.addr
	took, err := awaitSynced(ctx, sb.Gateway, sb.History.Head, o.ready)
	if err != nil {
		g.stop()
		return nil, err
	}
	fmt.Fprintf(stdout, "gateway %s: chain %d indexed to block %d, synced %.1fs after the gateway started\n", sb.Gateway, pt.ChainID, sb.History.Head, took.Seconds())
	return g, nil
}

// printKeys prints the funded accounts, the contracts and what to try.
func printKeys(ctx context.Context, w io.Writer, sb *Sandbox) {
	p := sb.Protocol
	fmt.Fprintln(w, "funded accounts (10^24 wei of ETH, 10^9 WETH and USDC each, the market and position manager approved to spend them):")
	for i, a := range p.Chain.Accounts {
		fmt.Fprintf(w, "  %d %s key %s  (%s)\n", i, a.Addr.Hex(), hexutil.Encode(crypto.FromECDSA(a.Key)), accountRoles[i])
	}
	fmt.Fprintf(w, "contracts: market %s, position manager %s, handler %s, pool %s, WETH %s, USDC %s\n",
		p.Market.Hex(), p.PositionManager.Hex(), p.Handler.Hex(), p.Pool.Hex(), p.CallAsset.Hex(), p.PutAsset.Hex())
	h := sb.History
	fmt.Fprintf(w, "history: %d deposits, %d purchases (options %v), %d exercise, %d settlements (options %v), %d withdrawal\n",
		h.Deposits, len(h.Purchases), h.Purchases, h.Exercises, len(h.Settled), h.Settled, h.Withdrawals)
	if sb.Gateway == "" {
		return
	}
	q := fmt.Sprintf("chainId=%d&optionMarket=%s", pt.ChainID, p.Market.Hex())
	fmt.Fprintln(w, "try:")
	fmt.Fprintf(w, "  curl '%s/clamm/strikes-chain?%s&callsReach=10&putsReach=10'\n", sb.Gateway, q)
	fmt.Fprintf(w, "  curl '%s/clamm/purchase/history?%s&user=%s&first=100&skip=0'\n", sb.Gateway, q, p.Chain.Accounts[buyer].Addr.Hex())
	strike := firstStrike(ctx, sb.Gateway, q, "call")
	if strike == "" {
		strike = "<a call strike of the strikes chain>"
	}
	fmt.Fprintln(w, "buy 0.01 WETH of one-hour call as account 5 (docs/development.md#a-sandbox-chain), then see it in its purchase history:")
	fmt.Fprintf(w, "  curl -s '%s' \\\n", sb.Gateway+PurchasePrepare(p, strike))
	fmt.Fprintf(w, "    | go run ./cmd/clamm-sandbox send -rpc %s -key %s\n", sb.RPCURL, hexutil.Encode(crypto.FromECDSA(p.Chain.Accounts[you].Key)))
	fmt.Fprintf(w, "  curl '%s/clamm/purchase/history?%s&user=%s&first=100&skip=0'\n", sb.Gateway, q, p.Chain.Accounts[you].Addr.Hex())
}

// PurchasePrepare is the path and query of account 5's prepared
// purchase of a one-hour call of 0.01 WETH at strike.
func PurchasePrepare(p *pt.Protocol, strike string) string {
	return fmt.Sprintf("/clamm/purchase/prepare?chainId=%d&optionMarket=%s&user=%s&type=call&strike=%s&ttl=3600&amount=10000000000000000&slippage=1",
		pt.ChainID, p.Market.Hex(), p.Chain.Accounts[you].Addr.Hex(), strike)
}
