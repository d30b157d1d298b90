package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/eventually"
	"github.com/clamm-gateway/clamm-gateway/internal/testenv/prereq"
)

// The README's sandbox, as a user runs it: the chain starts with the
// history, the gateway (built from this clone, given only the chain's
// RPC URL and what to index) reports it synced, and a purchase prepared by
// the gateway, signed with a printed key and sent by `clamm-sandbox send`,
// shows in the buyer's purchase history at the block that mined it, and
// not at the block before.
func TestSandboxBuysWithAPrintedKey(t *testing.T) {
	_, err := os.Stat(filepath.Join(root(), factoryArtifact))
	if errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("%s is missing", factoryArtifact)
	}
	prereq.Need(t, "the Uniswap V3 artifacts from npm", err)
	ctx, cancel := context.WithCancel(context.Background())
	// Files, which the gateway's echo goroutine and run may write at once.
	out, logs := tempFile(t, "out"), tempFile(t, "log")
	up := make(chan *Sandbox, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-rpc", "127.0.0.1:0", "-listen", "127.0.0.1:0", "-block-time", "1s", "-ready-timeout", "10m"}, out, logs,
			func(sb *Sandbox) { up <- sb })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	var sb *Sandbox
	select {
	case sb = <-up:
	case err := <-done:
		done <- err
		t.Fatalf("the sandbox stopped at start: %v\n%s\n%s", err, read(t, out), read(t, logs))
	}
	printed := read(t, out)
	you := sb.Protocol.Chain.Accounts[you]
	key := hexutil.Encode(crypto.FromECDSA(you.Key))
	for _, want := range []string{fmt.Sprintf("chain %d: %s", pt.ChainID, sb.RPCURL), key, "synced", "CLAMM_CHAIN_1337_RPC_URL=" + sb.RPCURL} {
		if !strings.Contains(printed, want) {
			t.Errorf("the start does not print %q:\n%s", want, printed)
		}
	}
	q := fmt.Sprintf("chainId=%d&optionMarket=%s", pt.ChainID, sb.Protocol.Market.Hex())
	checkHistory(t, sb, q)

	strike := firstStrike(ctx, sb.Gateway, q, "call")
	if strike == "" {
		t.Fatal("the strikes chain offers no call")
	}
	_, prepared := get(t, sb.Gateway+PurchasePrepare(sb.Protocol, strike))
	var sent bytes.Buffer
	if err := runSend(ctx, []string{"-rpc", sb.RPCURL, "-key", key}, bytes.NewReader(prepared), &sent); err != nil {
		t.Fatalf("send: %v\n%s", err, prepared)
	}
	m := regexp.MustCompile(`sent (0x[0-9a-f]{64}) .*\nmined in block (\d+)`).FindStringSubmatch(sent.String())
	if m == nil {
		t.Fatalf("send printed %q", sent.String())
	}
	hash, mined := m[1], m[2]
	history := sb.Gateway + "/clamm/purchase/history?" + q + "&user=" + you.Addr.Hex() + "&first=100&skip=0"
	var seenAt string
	eventually.True(t, "the purchase in the buyer's history", func() bool {
		h, body := get(t, history)
		seenAt = h.Get("X-Subgraph-Block")
		return strings.Contains(string(body), hash)
	})
	n, _ := strconv.ParseUint(mined, 10, 64)
	at, _ := strconv.ParseUint(seenAt, 10, 64)
	t.Logf("mined in block %d, first in the history at block %d (%d blocks later)", n, at, at-n)
	if _, body := get(t, fmt.Sprintf("%s&block=%d", history, n)); !strings.Contains(string(body), hash) || !strings.Contains(string(body), `"ttl":3600`) {
		t.Errorf("the history at the purchase's block %d: %s", n, body)
	}
	if _, body := get(t, fmt.Sprintf("%s&block=%d", history, n-1)); string(body) != "[]" {
		t.Errorf("the history at the block before the purchase: %s, want []", body)
	}
}

// checkHistory holds the stated history's purchases and settlements as
// the gateway answers them: the buyer's day call and hour call, the
// hour call settled.
func checkHistory(t *testing.T, sb *Sandbox, q string) {
	t.Helper()
	buyerAddr := sb.Protocol.Chain.Accounts[buyer].Addr.Hex()
	var purchases []struct {
		OptionID string `json:"optionId"`
		Type     string `json:"type"`
		TTL      int    `json:"ttl"`
	}
	_, body := get(t, sb.Gateway+"/clamm/purchase/history?"+q+"&user="+buyerAddr+"&first=100&skip=0")
	if err := json.Unmarshal(body, &purchases); err != nil || len(purchases) != 2 ||
		purchases[0].OptionID != sb.History.Purchases[1].String() || purchases[0].TTL != 3600 ||
		purchases[1].OptionID != sb.History.Purchases[0].String() || purchases[1].TTL != 86400 {
		t.Errorf("the buyer's purchases: %s (%v), want options %v newest first", body, err, sb.History.Purchases[:2])
	}
	_, body = get(t, sb.Gateway+"/clamm/settlements/history?"+q+"&user="+buyerAddr+"&first=100&skip=0")
	if !strings.Contains(string(body), `"optionId":"`+sb.History.Settled[0].String()+`"`) {
		t.Errorf("the buyer's settlements: %s, want option %s", body, sb.History.Settled[0])
	}
}

func get(t *testing.T, url string) (http.Header, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", url, resp.StatusCode, b.String())
	}
	return resp.Header, b.Bytes()
}

func tempFile(t *testing.T, name string) *os.File {
	f, err := os.Create(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func read(t *testing.T, f *os.File) string {
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
