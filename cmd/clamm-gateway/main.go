// Command clamm-gateway serves the CLAMM options REST gateway. With no
// configuration it serves the embedded demo recordings; see README.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stopWithGoRun()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "clamm-gateway:", err)
		os.Exit(1)
	}
}
