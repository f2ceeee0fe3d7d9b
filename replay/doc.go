// Package replay re-derives and checks everything from the log: it rebuilds
// projections, verifies the hash chain and compares projection checksums
// against a scratch rebuild, resolves reads at past revisions, and exports
// and imports whole logs as JSONL.
package replay
