// Package mcpe2e runs queryd under real MCP clients: the official MCP
// TypeScript SDK (session.cjs) and the MCP Inspector's CLI, both installed by
// scripts/setup-e2e.sh into var/e2e, over stdio (`queryd mcp`) and
// streamable HTTP (`queryd serve`), against a fresh database holding
// fixtures/handbook, with queryd connected as the read-only queryd role.
// The proof loop (proof_test.go) runs on a database of its own holding
// testdata/contracts as a layer with the contracts preset and answer mode
// extractive.
package mcpe2e
