// Package scale runs StrataKB beyond one process against real PostgreSQL
// (issue 30): queryd reading from a real hot standby of the test cluster
// (internal/replicatest), and several ingestd processes on one queue, in
// network namespaces of their own when the machine allows it. The tests
// build the binaries themselves and clean up after themselves, failed or
// not. docs/scale.md has the topology and the figures they measure.
package scale
