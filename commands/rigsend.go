package commands

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
)

// The intents of talking to a running rig without stopping it: a message
// typed into a seat's pane, and a snapshot taken while the seats run.

// MaxMessageBytes bounds a message typed into a seat's pane: a long
// instruction fits, a pasted file does not (tmux also bounds one command).
const MaxMessageBytes = 16 << 10

// CheckMessage validates a message to type into a seat's pane: not
// blank, at most MaxMessageBytes, no control character but newline (a tab
// or an escape would drive the agent's terminal, not say something to
// it), and no secret (the message enters the log).
// Errors: InvalidInput naming the field; RuleViolation for a secret.
func CheckMessage(op, text string) error {
	if strings.TrimSpace(text) == "" {
		return fault.New(fault.InvalidInput, "%s: text is empty", op).With("field", "text").WithHint("awr rig send ROLE@RIG 'WHAT TO SAY'")
	}
	if len(text) > MaxMessageBytes {
		return fault.New(fault.InvalidInput, "%s: text is %d bytes, more than the %d a message may have", op, len(text), MaxMessageBytes).
			With("field", "text").With("max", MaxMessageBytes)
	}
	for _, r := range text {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r < 0xa0) {
			return fault.New(fault.InvalidInput, "%s: text holds a control character (%q); only newlines may be typed besides plain text", op, r).
				With("field", "text")
		}
	}
	return refuseSecrets(op, [2]string{"text", text})
}

// MessageRequest is a message typed into a running seat's pane. SessionID
// is the seat's session as the sender saw it; Agent names the sender.
type MessageRequest struct {
	Address   string
	SessionID string
	Agent     string
	Text      string
	WriteMeta
}

// MessageResult is the recorded message.
type MessageResult struct {
	Replay
	Seq             int64 `json:"seq"`
	ProjectRevision int64 `json:"project_revision"`
}

// SendMessage records seat_message_sent on the seat's stream, before the
// text is typed. A repeated request id answers the first result with
// Replayed set, so a retried send types nothing twice.
// Errors: InvalidInput for a malformed address, text or agent;
// RuleViolation for a secret; NotFound for an unknown seat;
// InvalidTransition when the seat's session is not active or is not
// SessionID any more (the seat was stopped or relaunched since).
func SendMessage(ctx context.Context, env *Env, req MessageRequest) (*MessageResult, error) {
	const op = "rig send"
	_, rig, err := ParseAddress(req.Address)
	if err != nil {
		return nil, err
	}
	if err := CheckMessage(op, req.Text); err != nil {
		return nil, err
	}
	if err := refuseSecrets(op, [2]string{"agent", req.Agent}); err != nil {
		return nil, err
	}
	stream := "seat/" + req.Address
	return write(ctx, env, orDefault(req.Agent, "awr"), req.WriteMeta, []string{stream}, req, func(tx *events.Tx) (*MessageResult, error) {
		s, err := RequireSeat(tx.Conn, req.Address, tx.Head())
		if err != nil {
			return nil, err
		}
		if !s.SessionActive || s.SessionID != req.SessionID {
			return nil, fault.New(fault.InvalidTransition, "%s: seat %s is not running", op, req.Address).With("address", req.Address).
				WithHint("awr rig up %s", rig)
		}
		ev, err := tx.Append(events.NewEvent{Stream: stream, Payload: events.SeatMessageSent{Address: req.Address, Rig: rig,
			SessionID: req.SessionID, Agent: req.Agent, Text: req.Text}})
		if err != nil {
			return nil, err
		}
		return &MessageResult{Seq: ev.Seq, ProjectRevision: ev.Seq}, nil
	})
}

// TakeLiveSnapshot records the snapshot of a running rig
// (rig_snapshot_taken), refused when the rig's stream has an event after
// revision expected: a restore that started since the snapshot was read
// would make it describe a rig that is no longer there.
// Errors: InvalidInput for a malformed rig name, a snapshot without an id
// or an entry of another rig; NotFound for an unknown seat;
// RevisionConflict.
func TakeLiveSnapshot(ctx context.Context, env *Env, snap events.RigSnapshotTaken, expected int64) (int64, error) {
	return takeSnapshot(ctx, env, snap, &expected)
}
