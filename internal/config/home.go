package config

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// HomeVar names the folder default paths resolve against: var/db.env,
// var/models, var/lib and var/secrets.
const HomeVar = "STRATA_HOME"

// module is the go.mod module line of a StrataKB checkout.
const module = "github.com/stratakb/stratakb"

// Home is the folder the daemons' default paths (var/…) resolve against:
// STRATA_HOME when set, else the checkout the running executable lies in
// (bin/queryd of a clone, wherever it is started from), else "" (the
// working directory, as before). An MCP client starts `queryd mcp` in a
// folder of its own: without this the model's relative default paths named
// nothing there and queryd ran without embeddings.
func Home(getenv func(string) string) string {
	if h := strings.TrimSpace(getenv(HomeVar)); h != "" {
		return h
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return CheckoutOf(exe)
}

// WithHome returns getenv with STRATA_HOME set to Home's answer when it is
// unset, so that every reader of STRATA_HOME (var/db.env, the receipt key)
// finds the same folder.
func WithHome(getenv func(string) string) func(string) string {
	home := Home(getenv)
	if home == "" || strings.TrimSpace(getenv(HomeVar)) != "" {
		return getenv
	}
	return func(k string) string {
		if k == HomeVar {
			return home
		}
		return getenv(k)
	}
}

// CheckoutOf returns the StrataKB checkout that holds the file exe (symbolic
// links followed): the nearest folder above it whose go.mod declares the
// module. It returns "" when there is none, as for an executable installed
// elsewhere or a test binary.
func CheckoutOf(exe string) string {
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	abs, err := filepath.Abs(exe)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(abs); ; dir = filepath.Dir(dir) {
		if declaresModule(filepath.Join(dir, "go.mod")) {
			return dir
		}
		if parent := filepath.Dir(dir); parent == dir {
			return ""
		}
	}
}

func declaresModule(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "module" {
			return f[1] == module
		}
	}
	return false
}

// UnderHome resolves a default relative path against home; an absolute
// path, or any path when home is "", is returned as it is.
func UnderHome(home, path string) string {
	if home == "" || path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(home, path)
}
