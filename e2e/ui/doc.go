// Package uie2e tests the explorer (queryd serve's /ui/) in a real browser:
// Debian's Chromium, driven by playwright-core from node, against real
// ingestd and queryd processes and a database holding the fixture layer in
// testdata/explorer. Each scenario is a node script beside the tests; it
// prints what the page showed as JSON, which the Go test checks, and saves
// a screenshot under var/e2e/screenshots/.
package uie2e
