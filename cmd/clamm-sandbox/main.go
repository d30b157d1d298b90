// Command clamm-sandbox starts a local chain to try the gateway live on:
// an archive node (go-ethereum's simulated backend, in process, served
// over HTTP JSON-RPC on 127.0.0.1) with the real Uniswap V3 contracts and
// the project's test protocol (internal/evmtest/protocoltest), plays a
// stated history on it (see play), keeps mining a block every period,
// prints the chain id, RPC URL and funded keys, and starts the gateway
// indexing the chain from nothing but that RPC URL (the indexed mode).
//
//	go run ./cmd/clamm-sandbox
//
// `clamm-sandbox send` signs and sends a prepared transaction (a prepare
// route's answer, on stdin) with one of the printed keys. It is a second
// binary so that the served one, cmd/clamm-gateway, links no test code
// (TestServedBinaryLinksNoTestPackage): this one is built from the tests'
// own protocol. docs/development.md tells how to use it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	endWithParent()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if len(os.Args) > 1 && os.Args[1] == "send" {
		err = runSend(ctx, os.Args[2:], os.Stdin, os.Stdout)
	} else {
		err = run(ctx, os.Args[1:], os.Stdout, os.Stderr, nil)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "clamm-sandbox:", err)
		os.Exit(1)
	}
}
