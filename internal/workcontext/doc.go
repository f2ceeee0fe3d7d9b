// Package workcontext compiles the bounded context packet an agent reads
// before it works on an item: deterministic, offline, counted in o200k_base
// tokens. Required facts (goal, status, acceptance criteria, next action,
// blocker, unresolved dependencies, hard rules, the latest checkpoint's
// digest, next action and open loops) are never cut; optional chunks
// (related items, soft rules, earlier checkpoints, recent history) are
// added whole by priority while they fit and otherwise listed as omitted.
package workcontext
