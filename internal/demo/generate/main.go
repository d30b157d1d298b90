// Command generate rewrites the demo's recordings from its scenarios:
// run it from internal/demo (go generate ./internal/demo).
package main

import (
	"fmt"
	"os"

	"github.com/clamm-gateway/clamm-gateway/internal/demo"
)

func main() {
	if err := demo.Generate("recordings"); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}
