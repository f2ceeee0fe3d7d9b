// Package events is awr's source of truth: the append-only, hash-chained
// event log stored in one SQLite database per project.
//
// It owns the envelope (seq, id, kind, stream, stream_version, occurred_at,
// actor, request_id, payload, prev_hash, hash), the event kinds and their
// typed payloads, the canonical encoding the hash chain is computed over, the
// forward-only schema migrations, the Log interface every event store
// implements (package storetest is its conformance suite), and the SQLite
// Store that appends events in one IMMEDIATE transaction together with
// every registered Projector.
//
// The package knows nothing of the packages that build on it: projections
// plug in through the Projector interface.
package events
