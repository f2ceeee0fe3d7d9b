package events

import (
	"io"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/secret"
	"github.com/oklog/ulid/v2"
)

// This file holds the rules every store follows to turn a NewEvent into
// the next event of its log, so that the SQLite store and the PostgreSQL
// store (events/pgstore) seal the same events into the same bytes and the
// same hash chain.

// MaxRequestIDBytes bounds a request id, as a label is bounded: it is
// stored with the write's first event and quoted back in errors.
const MaxRequestIDBytes = 200

// CheckWriteOptions returns the error Log.Append reports for options it
// cannot run with. Errors: Internal without opts.Now or opts.Entropy, or
// for a RequestID without a Fingerprint; InvalidInput without an Actor,
// or for a request id longer than MaxRequestIDBytes or holding a control
// character (details.field request_id); RuleViolation for an actor or a
// request id that looks like a secret (CheckText).
func CheckWriteOptions(opts WriteOptions) error {
	if opts.Now.IsZero() || opts.Entropy == nil {
		return fault.New(fault.Internal, "write: clock and entropy are required inputs")
	}
	if opts.Actor == "" {
		return fault.New(fault.InvalidInput, "write: actor is required")
	}
	if opts.RequestID != "" && opts.Fingerprint == "" {
		return fault.New(fault.Internal, "write: a request id needs a fingerprint")
	}
	if n := len(opts.RequestID); n > MaxRequestIDBytes {
		return fault.New(fault.InvalidInput, "write: --request-id is %d bytes, more than the %d a request id may have", n, MaxRequestIDBytes).
			With("field", "request_id").With("flag", "--request-id").With("max", MaxRequestIDBytes)
	}
	for _, r := range opts.RequestID {
		if r < 0x20 || r == 0x7f {
			return fault.New(fault.InvalidInput, "write: --request-id holds a control character (%q); a request id is one plain line", r).
				With("field", "request_id").With("flag", "--request-id")
		}
	}
	if err := CheckText("write", "request_id", opts.RequestID); err != nil {
		return err
	}
	return CheckText("write", "actor", opts.Actor)
}

// CheckText refuses a text bound for the log that looks like a
// credential: the log is immutable, so a secret written into it could
// never be removed. Errors: RuleViolation naming op, the field and the
// kind of secret (details field and kind), never the text.
func CheckText(op, field, text string) error {
	if f, ok := secret.Find(text); ok {
		return secretRefused(op, field, f)
	}
	return nil
}

func secretRefused(op, field string, f secret.Finding) error {
	return fault.New(fault.RuleViolation, "%s: %s holds what looks like a %s; secrets never enter the log", op, field, f.Kind).
		With("field", field).With("kind", f.Kind)
}

// checkSecrets is the one check every event goes through before it is
// sealed, whatever command, front end or source built it: its id, its
// stream and every string of its payload (object keys too) must not look
// like a credential. Commands refuse secrets in the fields they know with
// their own words first; this catches every field they do not (ids, names,
// paths, repository file and branch names). Errors: RuleViolation naming
// the field's path (details.field, e.g. payload.items[2].key) and the
// kind of secret, never the secret.
func checkSecrets(kind Kind, ne NewEvent, payload []byte) error {
	op := "append event: " + string(kind)
	if err := CheckText(op, "id", ne.ID); err != nil {
		return err
	}
	if err := CheckText(op, "stream", ne.Stream); err != nil {
		return err
	}
	if path, f, ok := secret.FindJSON(payload); ok {
		return secretRefused(op, "payload."+path, f)
	}
	return nil
}

// ClampNow returns now, raised to headTime (the head event's occurred_at
// in UTC milliseconds) when earlier: a writer reads its clock before it
// takes the write lock, and another writer may have committed a later
// reading meanwhile.
func ClampNow(now time.Time, headTime int64) time.Time {
	if now.UnixMilli() < headTime {
		return time.UnixMilli(headTime).UTC()
	}
	return now
}

// NewEventID returns a fresh ULID from a write's clock reading and
// entropy, as Appender.NewID does.
func NewEventID(now time.Time, entropy io.Reader) string {
	return ulid.MustNew(ulid.Timestamp(now), entropy).String()
}

// Seal validates ne and returns the event it becomes when appended after
// prev in a write with options opts: seq prev.Revision+1, the id ne names
// or a fresh one, the stream's next version, occurred_at opts.Now raised
// to prev's, the write's actor, the request id on the write's first event
// (first), prev_hash prev.Hash and the hash over all of it. It does not
// store the event.
//
// streamVersion returns the latest stream_version of a stream as the
// write sees it (0 for a new stream); Seal calls it once ne is valid, and
// a store runs there any check of its own that comes before an event is
// sealed (the SQLite store refuses writes to an unforked replica).
//
// Errors: Internal when the payload is missing, of an unknown kind or does
// not encode as a JSON object, or the stream is empty; RuleViolation when
// the event's id, stream, actor or any string of its payload looks like a
// credential (checkSecrets); InvalidInput when the event would be more
// than MaxEventBytes as exported (checkSize); any error streamVersion
// returns, unchanged.
func Seal(ne NewEvent, opts WriteOptions, prev Head, first bool, streamVersion func(stream string) (int64, error)) (*Event, error) {
	if ne.Payload == nil {
		return nil, fault.New(fault.Internal, "append event: no payload")
	}
	// Marshal first: a nil payload pointer encodes as null (refused here)
	// rather than panic in Kind.
	payload, err := MarshalPayload(ne.Payload)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "append event")
	}
	kind := ne.Payload.Kind()
	if !Known(kind) {
		return nil, fault.New(fault.Internal, "append event: unknown kind %q", kind)
	}
	if ne.Stream == "" {
		return nil, fault.New(fault.Internal, "append event: %s without a stream", kind)
	}
	if err := checkSecrets(kind, ne, payload); err != nil {
		return nil, err
	}
	if err := CheckText("append event: "+string(kind), "actor", opts.Actor); err != nil {
		return nil, err
	}
	sv, err := streamVersion(ne.Stream)
	if err != nil {
		return nil, err
	}
	e := &Event{
		Seq:           prev.Revision + 1,
		ID:            ne.ID,
		Kind:          kind,
		Stream:        ne.Stream,
		StreamVersion: sv + 1,
		OccurredAt:    max(opts.Now.UnixMilli(), prev.OccurredAt),
		Actor:         opts.Actor,
		Payload:       payload,
		PrevHash:      prev.Hash,
	}
	if e.ID == "" {
		e.ID = NewEventID(opts.Now, opts.Entropy)
	}
	if first {
		e.RequestID = opts.RequestID
	}
	e.Hash = ComputeHash(e.PrevHash, e)
	if err := checkSize(e); err != nil {
		return nil, err
	}
	return e, nil
}

// CheckRevision is the scoped optimistic-concurrency check of a write
// that expects revision expected while the log stands at actual: it
// fails when a stream in streams has an event after expected, the write's
// own events (after actual) excepted. after returns, in seq order, the
// events of one stream with seq > expected, as Conflicts; CheckRevision
// asks it once per distinct stream.
//
// Errors: RevisionConflict with details expected, actual and conflicts (a
// []Conflict); InvalidInput when expected is beyond actual (details
// expected, actual) or negative; any error after returns, unchanged.
func CheckRevision(expected, actual int64, streams []string, after func(stream string, expected int64) ([]Conflict, error)) error {
	if expected > actual {
		return fault.New(fault.InvalidInput, "check revision: expected revision %d is beyond project_revision %d", expected, actual).
			With("expected", expected).With("actual", actual).WithHint("awr status")
	}
	if expected < 0 {
		return fault.New(fault.InvalidInput, "check revision: expected revision %d is negative", expected)
	}
	var conflicts []Conflict
	seen := map[string]bool{}
	for _, stream := range streams {
		if seen[stream] {
			continue
		}
		seen[stream] = true
		newer, err := after(stream, expected)
		if err != nil {
			return err
		}
		for _, c := range newer {
			if c.Seq > actual {
				break // the write's own events never conflict with it
			}
			conflicts = append(conflicts, c)
		}
	}
	if len(conflicts) == 0 {
		return nil
	}
	return fault.New(fault.RevisionConflict, "check revision: %d newer event(s) on the streams this write depends on since revision %d", len(conflicts), expected).
		With("expected", expected).With("actual", actual).With("conflicts", conflicts).
		WithHint("awr status")
}

// RequestIDUsed returns the InvalidInput error of a write whose request id
// was already used, with details request_id and seq (the first event of
// the earlier write): for a different request (another fingerprint) when
// different is set, else by an event whose write left no idempotency
// record (an imported log carries request ids without their records).
func RequestIDUsed(requestID string, seq int64, different bool) error {
	what := ""
	if different {
		what = " for a different request"
	}
	return fault.New(fault.InvalidInput, "write: request id %q was already used%s (seq %d); use a new request id", requestID, what, seq).
		With("request_id", requestID).With("seq", seq)
}
