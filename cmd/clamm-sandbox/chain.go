package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/node"

	pt "github.com/clamm-gateway/clamm-gateway/internal/evmtest/protocoltest"
)

// root is the module's directory, found from this source file: the
// sandbox is run from a clone (`go run ./cmd/clamm-sandbox`), and reads
// the npm artifacts and builds the gateway there.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// factoryArtifact is one of the Uniswap V3 artifacts protocoltest deploys
// from internal/evmtest/testdata/node_modules: present, they all are (one
// npm ci installs them).
const factoryArtifact = "internal/evmtest/testdata/node_modules/@uniswap/v3-core/artifacts/contracts/UniswapV3Factory.sol/UniswapV3Factory.json"

// ensureArtifacts installs the real Uniswap V3 contracts' compiled
// artifacts when they are missing, with the same npm ci as
// scripts/test-setup.sh (pinned by internal/evmtest/testdata's
// package-lock.json, about 20 MB). They are not committed: npm's registry
// is their one source, as for the tests that deploy them.
func ensureArtifacts(stderr io.Writer) error {
	if _, err := os.Stat(filepath.Join(root(), factoryArtifact)); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return fmt.Errorf("the Uniswap V3 artifacts are missing (%s) and npm is not on PATH: install Node.js, or run scripts/test-setup.sh", factoryArtifact)
	}
	fmt.Fprintln(stderr, "clamm-sandbox: npm ci in internal/evmtest/testdata (the Uniswap V3 contracts' compiled artifacts, once)")
	cmd := exec.Command("npm", "ci", "--prefix", filepath.Join(root(), "internal/evmtest/testdata"), "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in internal/evmtest/testdata: %w", err)
	}
	return nil
}

// freeAddr resolves port 0 of addr to a port free now: the simulated
// node takes a fixed port, and prints no other.
func freeAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-rpc %q: %w", addr, err)
	}
	if port != "0" {
		return addr, nil
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// served serves the node's JSON-RPC over HTTP on addr (go-ethereum's own
// HTTP server, as `geth --http` runs it), open to any origin so a
// browser wallet can reach it.
func served(addr string) (pt.NodeOption, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return nil, fmt.Errorf("-rpc %q: %w", addr, err)
	}
	return func(c *node.Config, _ *ethconfig.Config) {
		c.HTTPHost, c.HTTPPort = host, n
		c.HTTPModules = []string{"eth", "net", "web3"}
		c.HTTPCors, c.HTTPVirtualHosts = []string{"*"}, []string{"*"}
	}, nil
}

// miner mines a block every period until stopped, so the chain moves as
// a live one does and a sent transaction is mined within a period.
type miner struct {
	stopOnce sync.Once
	stopc    chan struct{}
	done     chan struct{}
}

func mine(ctx context.Context, p *pt.Protocol, period time.Duration) *miner {
	m := &miner{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-m.stopc:
				return
			case <-tick.C:
				p.Chain.Backend.Commit()
			}
		}
	}()
	return m
}

func (m *miner) stop() {
	m.stopOnce.Do(func() { close(m.stopc) })
	<-m.done
}
