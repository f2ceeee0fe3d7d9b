package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/awr-dev/awr/internal/fault"
)

// MaxPayload is the largest hook payload Parse and Read accept, in bytes.
const MaxPayload = 1 << 20

// The causes of a refused payload; every error Parse and Read return is an
// InvalidInput *fault.Error wrapping one of them (errors.Is works).
var (
	ErrTooLarge     = errors.New("payload over 1 MiB")
	ErrNotJSON      = errors.New("not one JSON object")
	ErrUnknownEvent = errors.New("event not handled")
	ErrMissingField = errors.New("required field missing")
	ErrFieldType    = errors.New("field of the wrong type")
	ErrFieldValue   = errors.New("field value refused")
)

// Bounds on the values awr keeps from a payload.
const (
	maxID    = 256  // session, turn and prompt ids
	maxWord  = 64   // source, trigger, reason, model
	maxPath  = 4096 // cwd, transcript path
	maxStamp = 64   // Gemini's timestamp

	// MaxForkContext bounds fork_context, awr's texts an OpenCode fork
	// already holds (awr's plugin sends at most 128 Ki characters).
	MaxForkContext = 512 << 10
)

// Event is one hook delivery, normalized across hosts.
type Event struct {
	Host           Host   `json:"host"`
	Name           Name   `json:"name"`
	HostEvent      string `json:"host_event"`                 // hook_event_name as sent
	ConversationID string `json:"conversation_id"`            // session_id
	TurnID         string `json:"turn_id,omitempty"`          // Codex turn_id; Claude prompt_id; OpenCode message id
	Cwd            string `json:"cwd"`                        // absolute
	TranscriptPath string `json:"transcript_path,omitempty"`  // "" when absent or null
	Source         string `json:"source,omitempty"`           // session_start: startup, resume, clear, compact, fork
	Trigger        string `json:"trigger,omitempty"`          // pre_compact, post_compact: manual, auto
	Reason         string `json:"reason,omitempty"`           // session_end
	StopHookActive bool   `json:"stop_hook_active,omitempty"` // stop: the host is already continuing because of a stop hook
	Model          string `json:"model,omitempty"`
	Timestamp      string `json:"timestamp,omitempty"` // Gemini: one per event, shared by every hook of it
	// ForkContext is, for an OpenCode fork (SessionStart source fork),
	// the texts of awr's that the forked session's copied messages hold,
	// oldest first: what a transcript is to the other hosts.
	ForkContext string `json:"-"`
	// Prompt is, for Gemini CLI's BeforeAgent, the prompt as Gemini sends
	// it, a context its SessionStart gave included; never checked, only
	// searched for awr's marks.
	Prompt string   `json:"-"`
	Fields []string `json:"fields"` // the payload's top-level field names, sorted
}

// Read reads one payload from r, at most MaxPayload bytes, and parses it as
// host h's.
//
// Errors: those of Parse; InvalidInput wrapping ErrTooLarge when r holds
// more than MaxPayload bytes; InvalidInput wrapping the read error.
func Read(h Host, r io.Reader) (Event, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxPayload+1))
	if err != nil {
		return Event{}, fault.Wrap(fault.InvalidInput, err, "hook payload: read")
	}
	return Parse(h, b)
}

// Parse decodes one hook payload of host h. Unknown fields are tolerated
// (hosts add fields); the fields awr relies on are checked per host and
// event: session_id, an absolute cwd and hook_event_name always, and the
// event's own (source, trigger, reason, stop_hook_active, Codex's turn_id).
// Values of source, trigger and reason outside the documented sets are kept,
// since hosts add values.
//
// Errors: InvalidInput wrapping ErrUnknownHost, ErrTooLarge, ErrNotJSON,
// ErrUnknownEvent (with detail "event"), ErrMissingField, ErrFieldType or
// ErrFieldValue (with detail "field"). With an error, the Event holds
// what the payload said before the refused field, for a diagnostic: its
// host, its hook_event_name (HostEvent) and its session_id
// (ConversationID), each read within its bounds; nothing else.
func Parse(h Host, payload []byte) (Event, error) {
	const op = "hook payload"
	if !h.valid() {
		return Event{}, fault.Wrap(fault.InvalidInput, ErrUnknownHost, "%s: host %q", op, h).With("host", string(h))
	}
	if len(payload) > MaxPayload {
		return Event{}, fault.Wrap(fault.InvalidInput, ErrTooLarge, "%s: more than %d bytes", op, MaxPayload).With("limit", MaxPayload)
	}
	raw, err := decodeObject(payload)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return Event{}, fault.Wrap(fault.InvalidInput, se, "%s: not JSON", op).With("line", se.Line).With("column", se.Column)
		}
		return Event{}, fault.Wrap(fault.InvalidInput, ErrNotJSON, "%s: %s", op, err.Error())
	}
	d := fields{raw: raw}
	wire, err := d.text("hook_event_name", true, maxWord)
	if err != nil {
		return Event{}, err
	}
	s, ok := lookup(h, wire)
	if !ok {
		conv, _ := d.id("session_id", false) // named when it is one
		return Event{Host: h, HostEvent: wire, ConversationID: conv}, fault.Wrap(fault.InvalidInput, ErrUnknownEvent, "%s: %s event %q", op, h, wire).
			With("host", string(h)).With("event", wire)
	}
	e := Event{Host: h, Name: s.name, HostEvent: wire}
	if e.ConversationID, err = d.id("session_id", true); err != nil {
		return Event{Host: h, HostEvent: wire}, err
	}
	// From here a refusal names the event and its conversation.
	partial := Event{Host: h, HostEvent: wire, ConversationID: e.ConversationID}
	if e.Cwd, err = d.path("cwd", true); err != nil {
		return partial, err
	}
	if e.TranscriptPath, err = d.path("transcript_path", false); err != nil {
		return partial, err
	}
	switch h {
	case Claude:
		e.TurnID, err = d.id("prompt_id", false)
	case Codex, OpenCode:
		// OpenCode: awr's plugin sends the user message's id.
		e.TurnID, err = d.id("turn_id", has(s.requires, "turn_id"))
	}
	if err != nil {
		return partial, err
	}
	if e.Model, err = d.text("model", false, maxWord*2); err != nil {
		return partial, err
	}
	if h == Gemini {
		if e.Timestamp, err = d.text("timestamp", false, maxStamp); err != nil {
			return partial, err
		}
	}
	switch s.name {
	case BeforeAgent:
		if h == Gemini {
			e.Prompt, _, err = d.str("prompt")
		}
	case SessionStart:
		e.Source, err = d.text("source", has(s.requires, "source"), maxWord)
		if err == nil && h == OpenCode {
			e.ForkContext, err = d.block("fork_context", MaxForkContext)
		}
	case PreCompact, PostCompact:
		e.Trigger, err = d.text("trigger", has(s.requires, "trigger"), maxWord)
	case SessionEnd:
		e.Reason, err = d.text("reason", has(s.requires, "reason"), maxWord)
	case Stop:
		e.StopHookActive, err = d.boolean("stop_hook_active", has(s.bools, "stop_hook_active"))
	}
	if err != nil {
		return partial, err
	}
	e.Fields = make([]string, 0, len(raw))
	for k := range raw {
		e.Fields = append(e.Fields, k)
	}
	sort.Strings(e.Fields)
	return e, nil
}

// decodeObject decodes b as exactly one JSON object.
func decodeObject(b []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty")
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, errors.New("not a JSON object")
		}
		line, col := position(b, offsetOf(err, len(b)))
		return nil, &SyntaxError{Line: line, Column: col, Msg: err.Error(), kind: ErrNotJSON}
	}
	if raw == nil {
		return nil, errors.New("not a JSON object")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		line, col := position(b, int(dec.InputOffset()))
		return nil, &SyntaxError{Line: line, Column: col, Msg: "data after the object", kind: ErrNotJSON}
	}
	return raw, nil
}

// fields reads typed values out of a decoded payload.
type fields struct{ raw map[string]json.RawMessage }

func (d fields) missing(name string) error {
	return fault.Wrap(fault.InvalidInput, ErrMissingField, "hook payload: %s", name).With("field", name)
}

func (d fields) refuse(cause error, name, why string) error {
	return fault.Wrap(fault.InvalidInput, cause, "hook payload: %s %s", name, why).With("field", name)
}

// str returns the string field name; "" with ok false when it is absent or
// null.
func (d fields) str(name string) (string, bool, error) {
	v, ok := d.raw[name]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, d.refuse(ErrFieldType, name, "is not a string")
	}
	return s, true, nil
}

// text returns a short word-like string: bounded, without control
// characters, non-empty when required.
func (d fields) text(name string, required bool, limit int) (string, error) {
	s, ok, err := d.str(name)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		if required {
			return "", d.missing(name)
		}
		return "", nil
	}
	if len(s) > limit {
		return "", d.refuse(ErrFieldValue, name, "is too long")
	}
	if !printable(s) {
		return "", d.refuse(ErrFieldValue, name, "holds a control character")
	}
	return s, nil
}

// block returns an optional text of several lines: bounded, valid UTF-8,
// no control character but newlines and tabs.
func (d fields) block(name string, limit int) (string, error) {
	s, _, err := d.str(name)
	if err != nil {
		return "", err
	}
	if len(s) > limit {
		return "", d.refuse(ErrFieldValue, name, "is too long")
	}
	if !printable(strings.NewReplacer("\n", "", "\t", "", "\r", "").Replace(s)) {
		return "", d.refuse(ErrFieldValue, name, "holds a control character")
	}
	return s, nil
}

func (d fields) id(name string, required bool) (string, error) {
	return d.text(name, required, maxID)
}

// path returns a path field: cwd must be absolute; a transcript path may
// also start with ~.
func (d fields) path(name string, required bool) (string, error) {
	s, err := d.text(name, required, maxPath)
	if err != nil || s == "" {
		return s, err
	}
	if name != "cwd" && s[0] == '~' {
		return s, nil // the hosts' own examples write transcript paths from the home directory
	}
	if !filepath.IsAbs(s) {
		return "", d.refuse(ErrFieldValue, name, "is not an absolute path")
	}
	return s, nil
}

func (d fields) boolean(name string, required bool) (bool, error) {
	v, ok := d.raw[name]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		if required {
			return false, d.missing(name)
		}
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, d.refuse(ErrFieldType, name, "is not a boolean")
	}
	return b, nil
}

// printable reports whether s is valid UTF-8 without control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
