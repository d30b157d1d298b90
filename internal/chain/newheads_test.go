package chain_test

import (
	"bufio"
	"context"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/clamm-gateway/clamm-gateway/internal/block"
	"github.com/clamm-gateway/clamm-gateway/internal/chain"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// anvilBin is Foundry's anvil from npm (testdata/anvil: npm ci).
const anvilBin = "testdata/anvil/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"

// startAnvil runs anvil on a loopback port of its own, mining only when
// asked (evm_mine), and returns its HTTP and WebSocket URLs once it
// listens.
func startAnvil(t *testing.T) (httpURL, wsURL string) {
	t.Helper()
	_, err := os.Stat(anvilBin)
	prereq.Need(t, "Foundry's anvil from npm (internal/chain/testdata/anvil)", err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(anvilBin, "--host", "127.0.0.1", "--port", port)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() { // anvil prints its address once it accepts connections
		if strings.Contains(sc.Text(), "Listening on") {
			go func() {
				for sc.Scan() {
				}
			}()
			return "http://127.0.0.1:" + port, "ws://127.0.0.1:" + port
		}
	}
	t.Fatal("anvil exited before listening")
	return "", ""
}

// mine has anvil mine n blocks and returns their headers.
func mine(t *testing.T, httpURL string, n int) []*types.Header {
	t.Helper()
	c, err := rpc.Dial(httpURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ec := ethclient.NewClient(c)
	var out []*types.Header
	for range n {
		if err := c.Call(nil, "evm_mine"); err != nil {
			t.Fatal(err)
		}
		h, err := ec.HeaderByNumber(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

// mineUntil has anvil mine blocks, one after another, until seen returns,
// and returns the node's head then.
func mineUntil(t *testing.T, httpURL string, seen func()) uint64 {
	t.Helper()
	c, err := ethclient.Dial(httpURL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				if err := c.Client().Call(nil, "evm_mine"); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	seen()
	close(stop)
	<-stopped
	n, err := c.BlockNumber(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// NewHeads, on a real node's WebSocket, reports every block the node
// mines with its number, hash and time, in order.
func TestNewHeadsFollowsTheNode(t *testing.T) {
	httpURL, wsURL := startAnvil(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heads := make(chan block.Ref, 64)
	done := make(chan error, 1)
	go func() {
		done <- chain.NewHeads(ctx, wsURL, func(r block.Ref) { heads <- r })
	}()
	// The subscription is under way once a head arrives: mine until one
	// does, then read up to the node's head.
	top := mineUntil(t, httpURL, func() { <-heads })
	for r := range heads {
		if r.Number == top {
			break
		}
	}
	mined := mine(t, httpURL, 3)
	for i, h := range mined {
		got := <-heads
		want := block.Ref{Number: h.Number.Uint64(), Hash: strings.ToLower(h.Hash().Hex()), Timestamp: int64(h.Time)}
		if got != want {
			t.Fatalf("head %d after %d: %+v, want the node's %+v", i, top, got, want)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("after its context ended: %v", err)
	}
}

// A Graph Node chain's head feed with a WebSocket RPC URL moves at the
// node's newHeads, not its clock: with a poll period of an hour, each
// block mined reaches the chain's Heads (here the subgraph is the node
// itself, fully synced).
func TestPollerWakesOnNewHeads(t *testing.T) {
	httpURL, wsURL := startAnvil(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := nodeHeads{url: httpURL}
	wake := make(chan struct{}, 1)
	go func() {
		_ = chain.NewHeads(ctx, wsURL, func(block.Ref) {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
	}()
	var h block.Heads
	events := h.Subscribe(ctx)
	p := &block.Poller{Indexed: node, Headers: node, Every: 1 << 62, Wake: wake}
	go func() { _ = p.Run(ctx, &h) }()
	start := (<-events).Head.Number // the first round's head, at once
	// the WebSocket is subscribed once a mined block has moved the feed
	top := mineUntil(t, httpURL, func() {
		for ev := range events {
			if ev.Head.Number > start {
				return
			}
		}
	})
	for ev := range events {
		if ev.Head.Number == top {
			break
		}
	}
	for range 3 {
		want := mine(t, httpURL, 1)[0]
		for ev := range events {
			if ev.Head.Number == want.Number.Uint64() {
				if ev.Head.Hash != strings.ToLower(want.Hash().Hex()) {
					t.Fatalf("block %d: hash %s, the node's %s", ev.Head.Number, ev.Head.Hash, want.Hash().Hex())
				}
				break
			}
		}
	}
}

// nodeHeads reads anvil's headers: as the poller's Indexer (a subgraph
// synced to the head) and HeaderReader.
type nodeHeads struct{ url string }

func (n nodeHeads) IndexedHead(ctx context.Context) (block.Ref, error) {
	return n.Header(ctx, "latest")
}
func (n nodeHeads) Seen() *block.Seen { return &block.Seen{} }

func (n nodeHeads) Header(ctx context.Context, tag string) (block.Ref, error) {
	c, err := ethclient.DialContext(ctx, n.url)
	if err != nil {
		return block.Ref{}, err
	}
	defer c.Close()
	var num *big.Int
	if tag != "latest" {
		v, ok := new(big.Int).SetString(strings.TrimPrefix(tag, "0x"), 16)
		if !ok {
			return block.Ref{}, errors.New("bad tag " + tag)
		}
		num = v
	}
	h, err := c.HeaderByNumber(ctx, num)
	if err != nil {
		return block.Ref{}, err
	}
	return block.Ref{Number: h.Number.Uint64(), Hash: strings.ToLower(h.Hash().Hex()), Timestamp: int64(h.Time)}, nil
}

func (n nodeHeads) HeaderAt(ctx context.Context, num uint64) (block.Ref, error) {
	return n.Header(ctx, "0x"+strconv.FormatUint(num, 16))
}
