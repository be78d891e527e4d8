package server

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratakb/stratakb/queryd/internal/qerr"
)

func TestParseTokens(t *testing.T) {
	tk, err := ParseTokens("QUERYD_TOKENS", " reader:"+readerToken+" , admin:"+adminToken+"\n# a comment\n\nreader:another-reader-token-99")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Len() != 3 || tk.Role(readerToken) != RoleReader || tk.Role(adminToken) != RoleAdmin ||
		tk.Role("another-reader-token-99") != RoleReader || tk.Role("") != RoleNone || tk.Role(readerToken[:10]) != RoleNone {
		t.Errorf("roles wrong: %+v", tk)
	}
	secret := "s3cr3t-but-bad-role-token"
	for _, bad := range []string{"reader", "owner:" + secret, "reader:short", "admin:has space in it 12345"} {
		_, err := ParseTokens("QUERYD_TOKENS", bad)
		if err == nil || !strings.Contains(err.Error(), "QUERYD_TOKENS") {
			t.Errorf("%q: error %v should name QUERYD_TOKENS", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

func TestTokenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte("# queryd tokens\nadmin:"+adminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"QUERYD_TOKEN_FILE": p, "QUERYD_TOKENS": "reader:" + readerToken}
	tk, err := LoadTokens(func(k string) string { return env[k] })
	if err != nil || tk.Role(adminToken) != RoleAdmin || tk.Role(readerToken) != RoleReader {
		t.Errorf("tokens from file and variable: %v", err)
	}
	if err := os.WriteFile(p, []byte("# nothing\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadTokens(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "QUERYD_TOKEN_FILE") {
		t.Errorf("empty token file: %v", err)
	}
}

func TestRequireAdmin(t *testing.T) {
	ctx := context.Background()
	for role, ok := range map[Role]bool{RoleAdmin: true, RoleReader: false, RoleNone: false} {
		err := RequireAdmin(WithRole(ctx, role), "learning stats of every layer")
		if (err == nil) != ok || (err != nil && qerr.KindOf(err) != qerr.Forbidden) {
			t.Errorf("role %q: %v", role, err)
		}
	}
}
