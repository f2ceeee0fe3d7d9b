package events

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/awr-dev/awr/internal/fault"
)

// HashSize is the size in bytes of an event hash (SHA-256).
const HashSize = sha256.Size

// canonicalTag opens every canonical encoding; it versions the format.
const canonicalTag = "awr.event.v1"

// Event is one stored event: the envelope the store manages plus the payload
// bytes in canonical JSON. Typed payloads exist only above the store: Decode
// turns the bytes into one, afresh on every call.
type Event struct {
	Seq           int64
	ID            string
	Kind          Kind
	Stream        string
	StreamVersion int64
	OccurredAt    int64 // UTC milliseconds
	Actor         string
	RequestID     string // "" when the event carries no request id
	Payload       []byte
	PrevHash      []byte
	Hash          []byte
}

// Decode returns e's typed payload (a pointer, e.g. *SessionStarted),
// decoding it afresh on every call; callers that need it more than once
// keep the result. Errors: Storage, naming the seq and kind, when the kind
// is unknown to this awr or the payload does not decode as that kind.
func Decode(e *Event) (Payload, error) {
	v, err := DecodePayload(e.Kind, e.Payload)
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "event %d", e.Seq).
			With("seq", e.Seq).With("kind", e.Kind).WithHint("awr verify")
	}
	return v, nil
}

// CanonicalEncoding returns the bytes an event's hash covers, apart from the
// previous hash: the tag "awr.event.v1", then seq, id, kind, stream,
// stream_version, occurred_at, actor, request_id and payload. Integers are
// 8-byte big-endian (occurred_at as two's complement); strings and the
// payload are a 4-byte big-endian length followed by the bytes; request_id
// is one byte 0 (absent) or 1 followed by the string. docs/log-format.md
// specifies it.
func CanonicalEncoding(e *Event) []byte {
	n := len(canonicalTag) + 8*3 + 4*6 + 1 + len(e.ID) + len(e.Kind) + len(e.Stream) + len(e.Actor) + len(e.RequestID) + len(e.Payload)
	b := make([]byte, 0, n)
	b = appendString(b, canonicalTag)
	b = binary.BigEndian.AppendUint64(b, uint64(e.Seq))
	b = appendString(b, e.ID)
	b = appendString(b, string(e.Kind))
	b = appendString(b, e.Stream)
	b = binary.BigEndian.AppendUint64(b, uint64(e.StreamVersion))
	b = binary.BigEndian.AppendUint64(b, uint64(e.OccurredAt))
	b = appendString(b, e.Actor)
	if e.RequestID == "" {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = appendString(b, e.RequestID)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.Payload)))
	b = append(b, e.Payload...)
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// ComputeHash returns SHA-256(prev || CanonicalEncoding(e)). The first event
// of a log chains from 32 zero bytes.
func ComputeHash(prev []byte, e *Event) []byte {
	h := sha256.New()
	if len(prev) == 0 {
		prev = make([]byte, HashSize)
	}
	h.Write(prev)
	h.Write(CanonicalEncoding(e))
	return h.Sum(nil)
}

// Envelope is the JSON form of an event, used by `awr log`, `awr export` and
// `awr import`: the envelope fields, the payload as a JSON object and the
// hashes in lowercase hex.
type Envelope struct {
	Seq           int64           `json:"seq"`
	ID            string          `json:"id"`
	Kind          Kind            `json:"kind"`
	Stream        string          `json:"stream"`
	StreamVersion int64           `json:"stream_version"`
	OccurredAt    int64           `json:"occurred_at"`
	Actor         string          `json:"actor"`
	RequestID     *string         `json:"request_id"`
	Payload       json.RawMessage `json:"payload"`
	PrevHash      string          `json:"prev_hash"`
	Hash          string          `json:"hash"`
}

// ToEnvelope returns e's JSON form.
func (e *Event) ToEnvelope() Envelope {
	env := Envelope{
		Seq: e.Seq, ID: e.ID, Kind: e.Kind, Stream: e.Stream, StreamVersion: e.StreamVersion,
		OccurredAt: e.OccurredAt, Actor: e.Actor, Payload: json.RawMessage(e.Payload),
		PrevHash: hex.EncodeToString(e.PrevHash), Hash: hex.EncodeToString(e.Hash),
	}
	if e.RequestID != "" {
		r := e.RequestID
		env.RequestID = &r
	}
	return env
}

// FromEnvelope converts an envelope back to an event, canonicalizing the
// payload and decoding the hashes. It checks shape only, not the chain.
func FromEnvelope(env Envelope) (*Event, error) {
	if env.Seq < 1 {
		return nil, fmt.Errorf("seq %d: must be >= 1", env.Seq)
	}
	if env.ID == "" || env.Kind == "" || env.Stream == "" {
		return nil, fmt.Errorf("seq %d: id, kind and stream are required", env.Seq)
	}
	if !Known(env.Kind) {
		return nil, fmt.Errorf("seq %d: unknown event kind %q", env.Seq, env.Kind)
	}
	if env.StreamVersion < 1 {
		return nil, fmt.Errorf("seq %d: stream_version %d: must be >= 1", env.Seq, env.StreamVersion)
	}
	if len(env.Payload) == 0 || env.Payload[0] != '{' {
		return nil, fmt.Errorf("seq %d: payload must be a JSON object", env.Seq)
	}
	payload, err := CanonicalJSON(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("seq %d: payload: %v", env.Seq, err)
	}
	if _, err := DecodePayload(env.Kind, payload); err != nil {
		return nil, fmt.Errorf("seq %d: %v", env.Seq, err)
	}
	prev, err := decodeHash(env.PrevHash)
	if err != nil {
		return nil, fmt.Errorf("seq %d: prev_hash: %v", env.Seq, err)
	}
	hash, err := decodeHash(env.Hash)
	if err != nil {
		return nil, fmt.Errorf("seq %d: hash: %v", env.Seq, err)
	}
	e := &Event{
		Seq: env.Seq, ID: env.ID, Kind: env.Kind, Stream: env.Stream, StreamVersion: env.StreamVersion,
		OccurredAt: env.OccurredAt, Actor: env.Actor, Payload: payload, PrevHash: prev, Hash: hash,
	}
	if env.RequestID != nil {
		if *env.RequestID == "" {
			return nil, fmt.Errorf("seq %d: request_id: empty string (use null)", env.Seq)
		}
		e.RequestID = *env.RequestID
	}
	return e, nil
}

func decodeHash(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not hex")
	}
	if len(b) != HashSize {
		return nil, fmt.Errorf("%d bytes, want %d", len(b), HashSize)
	}
	return b, nil
}

// ChainCheck follows a log in seq order and reports the first event that
// does not continue the chain. The zero value expects seq 1.
type ChainCheck struct {
	prev []byte
	next int64
}

// Check returns "" when e is the next event of a sound chain: its seq is
// the one expected, its prev_hash is the previous event's hash and its hash
// recomputes from its content. Otherwise it names the problem.
func (c *ChainCheck) Check(e *Event) string {
	if problem := c.link(e); problem != "" {
		return problem
	}
	if problem := hashProblem(e); problem != "" {
		return problem
	}
	c.advance(e)
	return ""
}

// link checks e's place in the chain (its seq and prev_hash), not its own
// hash.
func (c *ChainCheck) link(e *Event) string {
	if c.next == 0 {
		c.next, c.prev = 1, make([]byte, HashSize)
	}
	switch {
	case e.Seq > c.next:
		return fmt.Sprintf("seq %d is missing (next stored seq is %d)", c.next, e.Seq)
	case e.Seq < c.next:
		return fmt.Sprintf("seq %d is out of order (expected %d)", e.Seq, c.next)
	case string(e.PrevHash) != string(c.prev):
		return fmt.Sprintf("prev_hash %s does not match the hash of seq %d (%s)", shortHex(e.PrevHash), e.Seq-1, shortHex(c.prev))
	}
	return ""
}

func (c *ChainCheck) advance(e *Event) { c.prev, c.next = e.Hash, c.next+1 }

// hashProblem says whether e's hash recomputes from its content; it
// depends on e alone, so events can be hashed in parallel once their links
// are checked in order.
func hashProblem(e *Event) string {
	if got := ComputeHash(e.PrevHash, e); string(got) != string(e.Hash) {
		return fmt.Sprintf("hash does not match the event's content (stored %s, computed %s): the row was edited", shortHex(e.Hash), shortHex(got))
	}
	return ""
}

// Expected is the seq the next Check expects.
func (c *ChainCheck) Expected() int64 {
	if c.next == 0 {
		return 1
	}
	return c.next
}

// Head is the hash of the last event checked (32 zero bytes before any).
func (c *ChainCheck) Head() []byte {
	if c.prev == nil {
		return make([]byte, HashSize)
	}
	return c.prev
}

func shortHex(h []byte) string {
	s := hex.EncodeToString(h)
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
