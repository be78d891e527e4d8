// Command ingestd is StrataKB's ingestion daemon and CLI: it registers layers,
// ingests folders with River workers, reports their state and migrates the
// database.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/stratakb/stratakb/ingestd/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
