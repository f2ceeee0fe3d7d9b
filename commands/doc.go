// Package commands holds awr's intents: each validates a request against the
// projections inside one IMMEDIATE transaction and emits events, or returns a
// typed error and writes nothing. Clock and entropy are inputs (Env), so
// every command is deterministic under test.
package commands
