package dbtest

import (
	"fmt"
	"net"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// RefusingServer starts a PostgreSQL server that refuses every password, as
// a server whose password was changed does, and returns its address
// (host:port). The throwaway test cluster accepts any password over TCP, so
// tests of the "password authentication failed" message use this.
func RefusingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go refuse(conn)
		}
	}()
	return ln.Addr().String()
}

// refuse answers one connection's startup with a password failure.
func refuse(conn net.Conn) {
	defer conn.Close()
	be := pgproto3.NewBackend(conn, conn)
	for {
		msg, err := be.ReceiveStartupMessage()
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
			if _, err := conn.Write([]byte("N")); err != nil {
				return
			}
		case *pgproto3.StartupMessage:
			be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01",
				Message: fmt.Sprintf("password authentication failed for user %q", m.Parameters["user"])})
			_ = be.Flush()
			return
		default:
			return
		}
	}
}
