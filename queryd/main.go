// Command queryd is StrataKB's query daemon and CLI: it searches the layers
// that ingestd keeps, read-only.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/stratakb/stratakb/queryd/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
