package commands

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
)

// The intents of taking a rig down and restoring it. Each is one command:
// commands decides the stream, checks that the seat or rig it names
// exists, and appends; the rig package only says what it saw.

// StopRequest asks a running seat's agent to checkpoint before its rig
// goes down. Message is the text typed into the agent's pane.
type StopRequest struct {
	Address   string
	SessionID string
	Message   string
}

// RequestStop appends stop_requested on the seat's stream and returns its
// seq. Errors: InvalidInput for a malformed address; NotFound for an
// unknown seat; RuleViolation when the message holds a secret.
func RequestStop(ctx context.Context, env *Env, req StopRequest) (int64, error) {
	_, rig, err := ParseAddress(req.Address)
	if err != nil {
		return 0, err
	}
	if err := refuseSecrets("rig down", [2]string{"message", req.Message}); err != nil {
		return 0, err
	}
	return appendOne(ctx, env, nil, "seat/"+req.Address, func(tx *events.Tx) (events.NewEvent, error) {
		if _, err := RequireSeat(tx.Conn, req.Address, tx.Head()); err != nil {
			return events.NewEvent{}, err
		}
		return events.NewEvent{Stream: "seat/" + req.Address,
			Payload: events.StopRequested{Address: req.Address, Rig: rig, SessionID: req.SessionID, Message: req.Message}}, nil
	})
}

// TakeSnapshot records a rig's snapshot (rig_snapshot_taken) and returns
// its seq. Every entry must name a seat of the rig.
// Errors: InvalidInput for a malformed rig name, a snapshot without an id,
// or an entry of another rig; NotFound for an unknown seat.
func TakeSnapshot(ctx context.Context, env *Env, snap events.RigSnapshotTaken) (int64, error) {
	return takeSnapshot(ctx, env, snap, nil)
}

// takeSnapshot appends snap, refused with RevisionConflict when expected
// is set and the rig's stream moved past it (see TakeSnapshot).
func takeSnapshot(ctx context.Context, env *Env, snap events.RigSnapshotTaken, expected *int64) (int64, error) {
	if err := CheckRigName(snap.Rig); err != nil {
		return 0, err
	}
	if err := required("snapshot_id", snap.SnapshotID); err != nil {
		return 0, err
	}
	return appendOne(ctx, env, expected, "rig/"+snap.Rig, func(tx *events.Tx) (events.NewEvent, error) {
		for _, e := range snap.Seats {
			if !strings.HasSuffix(e.Address, "@"+snap.Rig) {
				return events.NewEvent{}, fault.New(fault.InvalidInput, "rig snapshot: seat %s is not of rig %s", e.Address, snap.Rig).With("address", e.Address)
			}
			if _, err := RequireSeat(tx.Conn, e.Address, tx.Head()); err != nil {
				return events.NewEvent{}, err
			}
		}
		return events.NewEvent{Stream: "rig/" + snap.Rig, Payload: snap}, nil
	})
}

// StartRestore opens (or, with Continued, takes over) a restore attempt of
// a rig: restore_started on the rig's stream, refused when that stream has
// an event after revision expected, so two concurrent `rig up`s cannot
// both start one. Errors: InvalidInput for a malformed rig name or an
// attempt without an id; NotFound for a seat of the attempt that does not
// exist; RevisionConflict.
func StartRestore(ctx context.Context, env *Env, rs events.RestoreStarted, expected int64) (int64, error) {
	if err := CheckRigName(rs.Rig); err != nil {
		return 0, err
	}
	if err := required("restore_id", rs.RestoreID); err != nil {
		return 0, err
	}
	return appendOne(ctx, env, &expected, "rig/"+rs.Rig, func(tx *events.Tx) (events.NewEvent, error) {
		for _, a := range rs.Seats {
			if _, err := RequireSeat(tx.Conn, a, tx.Head()); err != nil {
				return events.NewEvent{}, err
			}
		}
		return events.NewEvent{Stream: "rig/" + rs.Rig, Payload: rs}, nil
	})
}

// SeatDecision is a person's decision for a seat awaiting one, scoped to
// the stop it answers.
type SeatDecision struct {
	Address  string
	Decision string
	Scope    string
}

// DecideSeat records a decision (seat_decided) for a seat. Errors:
// InvalidInput for a malformed address or an unknown decision; NotFound
// for an unknown seat.
func DecideSeat(ctx context.Context, env *Env, req SeatDecision) (int64, error) {
	_, rig, err := ParseAddress(req.Address)
	if err != nil {
		return 0, err
	}
	if req.Decision != events.DecisionFresh {
		return 0, fault.New(fault.InvalidInput, "seat %s: decision %q is not %s", req.Address, req.Decision, events.DecisionFresh).With("field", "decision")
	}
	return appendOne(ctx, env, nil, "seat/"+req.Address, func(tx *events.Tx) (events.NewEvent, error) {
		if _, err := RequireSeat(tx.Conn, req.Address, tx.Head()); err != nil {
			return events.NewEvent{}, err
		}
		return events.NewEvent{Stream: "seat/" + req.Address,
			Payload: events.SeatDecided{Address: req.Address, Rig: rig, Decision: req.Decision, Scope: req.Scope}}, nil
	})
}

// appendOne runs one command that appends the single event decide returns,
// guarded on stream by expected when set, and returns the event's seq.
func appendOne(ctx context.Context, env *Env, expected *int64, stream string, decide func(tx *events.Tx) (events.NewEvent, error)) (int64, error) {
	type result struct{ Seq int64 }
	res, err := write(ctx, env, "awr", WriteMeta{ExpectedRevision: expected}, []string{stream}, nil, func(tx *events.Tx) (*result, error) {
		ne, err := decide(tx)
		if err != nil {
			return nil, err
		}
		ev, err := tx.Append(ne)
		if err != nil {
			return nil, err
		}
		return &result{Seq: ev.Seq}, nil
	})
	if err != nil {
		return 0, err
	}
	return res.Seq, nil
}
