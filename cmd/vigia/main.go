// Command vigia is the one Vigia binary: the API and GraphQL server, its workers, and
// the command line operators and tests use.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Set at build time: -ldflags "-X main.version=... -X main.buildSHA=...".
var (
	version  = "dev"
	buildSHA = ""
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
