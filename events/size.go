package events

import (
	"encoding/json"

	"github.com/awr-dev/awr/internal/fault"
)

// MaxEventBytes bounds one event as `awr export` writes it: its JSONL line
// (envelope and payload, without the newline). It is the one cap the
// writer, export and import agree on: an append of a bigger event is
// refused, export never writes one and import reads every line up to this
// length, so every export imports. An index of a source too large for one
// event is split into parts (SourceIndexed.Part), each within
// MaxPartBytes.
const MaxEventBytes = 64 << 20

// MaxPartBytes bounds the payload of one part of a split source index:
// far enough under MaxEventBytes that the envelope always fits beside it.
const MaxPartBytes = 4 << 20

// LineSize returns the length in bytes of e's line in an export, without
// its newline: the envelope as JSON with the payload's canonical bytes in
// place.
func LineSize(e *Event) int {
	env := e.ToEnvelope()
	env.Payload = json.RawMessage(`{}`)
	b, _ := EncodeJSON(env) // an envelope of strings and integers always encodes
	return len(b) - 2 + len(e.Payload)
}

// checkSize refuses an event whose export line would exceed MaxEventBytes.
// Errors: InvalidInput (details kind, stream, bytes, max).
func checkSize(e *Event) error {
	n := LineSize(e)
	if n <= MaxEventBytes {
		return nil
	}
	return fault.New(fault.InvalidInput, "append event: the %s on %s is %d bytes as exported, more than the %d an event may be (export and import share the cap)", e.Kind, e.Stream, n, MaxEventBytes).
		With("kind", e.Kind).With("stream", e.Stream).With("bytes", n).With("max", MaxEventBytes)
}
