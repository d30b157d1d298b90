package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// gatewayConfig is the CLAMM_CONFIG file for the sandbox chain: what the
// embedded defaults cannot know of a chain they have never seen (its
// Multicall3, the handler's DEX, the hooks' rules, the Uniswap swapper and
// QuoterV2 that exercises are prepared with, the auto-exerciser, the
// settler). The chain's node and what to index come from the environment
// (env), as docs/configuration.md tells an operator to give them.
func gatewayConfig(p *pt.Protocol, h *history) map[string]any {
	return map[string]any{"chains": map[string]any{fmt.Sprint(pt.ChainID): map[string]any{
		"name":       "sandbox",
		"multicall3": h.Multicall3,
		"handlers":   map[common.Address]any{p.Handler: map[string]any{"name": "uniswap", "version": 2, "slot0": "uniswap-v3"}},
		"hooks": map[common.Address]any{
			p.Hook24h:   map[string]any{"name": "BoundedTTLHook_0Day", "maxTtl": "24h"},
			p.Hook1Week: map[string]any{"name": "BoundedTTLHook_1Week", "maxTtl": "168h"},
		},
		"swappers":      map[string]any{"uni-v3": map[string]any{"kind": "uniswap-v3", "address": p.Swapper, "quoter": p.Quoter}},
		"autoExerciser": p.AutoExercise,
		"settlers":      []common.Address{p.Owner.Addr},
	}}}
}

// env is the gateway's environment: the RPC URL and the data source to
// index (the position manager, from block 0: the markets, handlers and
// pools are found from its events), the configuration file, and the
// sandbox's own choices: a fresh index directory (a new chain each
// start), the indexer asking for the head every 500 ms and histories
// cached for a second with no stale grace, so an answer follows the
// chain within a block; the demo off (its chain is not this one).
func env(rpcURL, listen, cfgFile, indexDir string, p *pt.Protocol) []string {
	id := pt.ChainID
	return []string{
		fmt.Sprintf("CLAMM_CHAINS=%d", id),
		fmt.Sprintf("CLAMM_CHAIN_%d_RPC_URL=%s", id, rpcURL),
		fmt.Sprintf("CLAMM_CHAIN_%d_INDEX_SOURCES=PositionManager:%s@0", id, p.PositionManager.Hex()),
		"CLAMM_CONFIG=" + cfgFile,
		"CLAMM_LISTEN=" + listen,
		"CLAMM_INDEX_DIR=" + indexDir,
		"CLAMM_INDEX_POLL=500ms",
		"CLAMM_HISTORY_TTL=1s",
		"CLAMM_STALE_GRACE=0s",
		"CLAMM_DEMO=off",
	}
}

// buildGateway builds cmd/clamm-gateway into dir with `go build -v`, so
// the first build (go-ethereum and the rest: minutes on a cold cache)
// names each package as it compiles it.
func buildGateway(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	bin := filepath.Join(dir, "clamm-gateway")
	fmt.Fprintf(stderr, "clamm-sandbox: go build -v -o %s ./cmd/clamm-gateway (a cold first build takes minutes; each package is named as it compiles)\n", bin)
	cmd := exec.CommandContext(ctx, "go", "build", "-v", "-o", bin, "./cmd/clamm-gateway")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root(), stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the gateway: %w", err)
	}
	return bin, nil
}

// gatewayProc is the running gateway: its listen address (from its
// banner) and how to stop it.
type gatewayProc struct {
	addr string
	cmd  *exec.Cmd
	done chan error
}

// startGateway starts bin with environ added to the sandbox's own
// environment (the sandbox's settings win), echoes its output, and
// returns once it prints the address it listens on. It ends with the
// sandbox (SIGTERM when the sandbox dies, and at stop).
func startGateway(bin string, environ []string, stdout, stderr io.Writer) (*gatewayProc, error) {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), environ...)
	cmd.Stderr = stderr
	endsWithUs(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &gatewayProc{cmd: cmd, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(stdout, "gateway: "+line)
			if _, a, ok := strings.Cut(line, " listening on "); ok {
				select {
				case addr <- a:
				default:
				}
			}
		}
		g.done <- cmd.Wait()
	}()
	select {
	case g.addr = <-addr:
		return g, nil
	case err := <-g.done:
		return nil, fmt.Errorf("the gateway stopped at start: %v", err)
	}
}

// stop ends the gateway as Ctrl-C does, and waits for it.
func (g *gatewayProc) stop() {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.done:
	case <-time.After(15 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.done
	}
}

// awaitSynced asks /readyz until the sandbox chain is indexed up to
// head at least, within bound; it returns how long that took.
func awaitSynced(ctx context.Context, base string, head uint64, bound time.Duration) (time.Duration, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	last := ""
	for {
		ok, state := synced(ctx, base, head)
		if ok {
			return time.Since(start), nil
		}
		last = state
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("chain %d not synced to block %d within %s; /readyz: %s", pt.ChainID, head, bound, last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// synced reads /readyz's entry of the sandbox chain.
func synced(ctx context.Context, base string, head uint64) (bool, string) {
	var ready struct {
		Chains []struct {
			ChainID  uint64 `json:"chainId"`
			Indexing *struct {
				State string `json:"state"`
				Block uint64 `json:"block"`
			} `json:"indexing"`
		} `json:"chains"`
	}
	body, err := getBody(ctx, base+"/readyz")
	if err != nil {
		return false, err.Error()
	}
	if err := json.Unmarshal(body, &ready); err != nil {
		return false, string(body)
	}
	for _, c := range ready.Chains {
		if c.ChainID == pt.ChainID && c.Indexing != nil {
			return c.Indexing.State == "synced" && c.Indexing.Block >= head, string(body)
		}
	}
	return false, string(body)
}

func getBody(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(io.LimitReader(resp.Body, 32<<20))
}

// firstStrike is the lowest strike of type typ ("call" or "put") the
// gateway's strikes chain offers on the sandbox market now ("" if none).
func firstStrike(ctx context.Context, base, query, typ string) string {
	body, err := getBody(ctx, base+"/clamm/strikes-chain?"+query+"&callsReach=10&putsReach=10")
	if err != nil {
		return ""
	}
	var chain []map[string]struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(body, &chain) != nil {
		return ""
	}
	for _, entry := range chain {
		for strike, s := range entry {
			if s.Type == typ {
				return strike
			}
		}
	}
	return ""
}
