package rig

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// Seat states `rig ps` reports (docs/rigs.md defines each).
const (
	// StateRunning: the seat's session is active (and, at the head, its
	// pane runs).
	StateRunning = "running"
	// StateStopped: declared, never launched.
	StateStopped = "stopped"
	// StateRecoverable: stopped after a launch (or, at the head, active
	// with its agent gone): rig up continues from its session.
	StateRecoverable = "recoverable"
	// StateAwaitingDecision: its last restore could not resume it and
	// nothing runs for it until someone decides (rig up --fresh).
	StateAwaitingDecision = "awaiting-decision"
	// StateAttentionRequired: a restore asked a person to look and no one
	// has answered yet (awr seat clear-attention).
	StateAttentionRequired = "attention_required"
)

// PsSeat is one seat in `awr rig ps` and `awr seat list`.
type PsSeat struct {
	Address      string `json:"address"`
	State        string `json:"state"`
	Policy       string `json:"policy"`
	Runtime      string `json:"runtime"`
	Work         string `json:"work,omitempty"`
	SessionID    string `json:"session_id,omitempty"`
	Conversation string `json:"conversation,omitempty"`
	TmuxSession  string `json:"tmux_session,omitempty"`
	LastOutcome  string `json:"last_outcome,omitempty"`
	LastReason   string `json:"last_reason,omitempty"`
	// Hint is the command that answers the seat's state, when it needs
	// one (attention_required, awaiting-decision).
	Hint string `json:"hint,omitempty"`
	// ResumedBy is the session someone resumed from the seat's session by
	// hand, waiting for `awr seat reconcile` to adopt it.
	ResumedBy string `json:"resumed_by,omitempty"`
	// TmuxAlive is read from tmux at the head only.
	TmuxAlive *bool `json:"tmux_alive,omitempty"`
}

// PsResult is `awr rig ps`.
type PsResult struct {
	Rig               string    `json:"rig"`
	Snapshot          *string   `json:"snapshot"`
	LastResult        string    `json:"last_result,omitempty"`
	UnfinishedRestore string    `json:"unfinished_restore,omitempty"`
	Seats             []*PsSeat `json:"seats"`
	ProjectRevision   int64     `json:"project_revision"`
}

// state derives a seat's state from the log; live adds what tmux says (at
// the head): an active session whose agent is gone is recoverable.
func state(ss *seatState, live bool) string {
	s := &ss.seat
	switch {
	case s.AttentionSeq != 0:
		return StateAttentionRequired
	case len(ss.successors) > 0:
		return StateAwaitingDecision
	case s.SessionActive && live && !ss.alive:
		return StateRecoverable
	case s.SessionActive:
		return StateRunning
	case s.LastOutcome == events.SeatAwaitingDecision && s.LastOutcomeSeq > s.LaunchedSeq:
		return StateAwaitingDecision
	case s.SessionID != "":
		return StateRecoverable
	}
	return StateStopped
}

func psSeat(ss *seatState, live bool) *PsSeat {
	s := &ss.seat
	p := &PsSeat{Address: s.Address, State: state(ss, live), Policy: s.Policy, Runtime: s.Runtime, Work: s.Work, SessionID: s.SessionID,
		Conversation: s.Conversation, TmuxSession: s.TmuxSession, LastOutcome: s.LastOutcome, LastReason: s.LastReason}
	if p.Conversation == "" {
		p.Conversation = s.LastConversation
	}
	switch p.State {
	case StateAttentionRequired:
		p.Hint = clearHint(s.Address)
	case StateAwaitingDecision:
		p.Hint = fmt.Sprintf("awr rig up %s --fresh %s", s.Rig, s.Address)
		if len(ss.successors) > 0 {
			p.Hint = reconcileHint(s.Address)
			p.ResumedBy = ss.successors[len(ss.successors)-1]
		}
	}
	if live {
		alive := ss.alive
		p.TmuxAlive = &alive
	}
	return p
}

// Ps lists a rig's seats at rev (the head when rev < 0).
func (m *Manager) Ps(ctx context.Context, rig string, at commands.Read) (*PsResult, error) {
	live := !at.Past()
	st, err := m.load(ctx, rig, at, live)
	if err != nil {
		return nil, err
	}
	if err := requireSeats(st); err != nil {
		return nil, err
	}
	res := &PsResult{Rig: rig, LastResult: st.lastResult, ProjectRevision: st.head}
	if st.snapshot != nil {
		res.Snapshot = &st.snapshot.SnapshotID
	}
	if st.unfinished != nil {
		res.UnfinishedRestore = st.unfinished.RestoreID
	}
	for _, ss := range st.seats {
		res.Seats = append(res.Seats, psSeat(ss, live))
	}
	return res, nil
}

// ListResult is `awr seat list`.
type ListResult struct {
	Seats           []*PsSeat `json:"seats"`
	ProjectRevision int64     `json:"project_revision"`
}

// List lists the seats of every rig (or of one) at rev.
func (m *Manager) List(ctx context.Context, rig string, at commands.Read) (*ListResult, error) {
	if rig != "" {
		if err := commands.CheckRigName(rig); err != nil {
			return nil, err
		}
	}
	live := !at.Past()
	res := &ListResult{Seats: []*PsSeat{}}
	var seats []projections.Seat
	var successors [][]string
	err := m.Env.Store.Read(ctx, func(r *events.Reader) error {
		rev, _, err := at.Resolve(r, 0)
		if err != nil {
			return err
		}
		res.ProjectRevision = rev
		if seats, err = projections.SeatsAt(r.Conn, rig, rev); err != nil {
			return err
		}
		successors = make([][]string, len(seats))
		for i := range seats {
			ss := &seatState{seat: seats[i]}
			if err := ss.handResumed(r.Conn, rev); err != nil {
				return err
			}
			successors[i] = ss.successors
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range seats {
		ss := &seatState{seat: seats[i], successors: successors[i]}
		if live {
			ss.alive = ss.seat.SessionActive && m.paneAlive(ctx, &ss.seat)
		}
		res.Seats = append(res.Seats, psSeat(ss, live))
	}
	return res, nil
}

// Occupant is one launch of a seat: the session, the conversation its agent
// reported, how the session ended and the restore outcome.
type Occupant struct {
	SessionID    string `json:"session_id"`
	Mode         string `json:"mode"`
	LaunchedSeq  int64  `json:"launched_seq"`
	Conversation string `json:"conversation,omitempty"`
	Ended        string `json:"ended,omitempty"`
	Outcome      string `json:"outcome,omitempty"`
	Reason       string `json:"reason,omitempty"`
}

// ShowResult is `awr seat show`.
type ShowResult struct {
	Seat            *projections.Seat          `json:"seat"`
	State           string                     `json:"state"`
	Occupants       []*Occupant                `json:"occupants"`
	History         []projections.SeatLogEntry `json:"history"`
	ProjectRevision int64                      `json:"project_revision"`
}

// occupants lists a seat's occupants from its history, oldest first: a
// launch or a reconcile brings one in; the binding, the end and the
// restore recorded after it fill in its conversation and how it went.
func occupants(history []projections.SeatLogEntry) ([]*Occupant, error) {
	out := []*Occupant{}
	bySession := map[string]*Occupant{}
	for _, e := range history {
		switch e.Kind {
		case "launched", "reconciled", "bound", "ended", "restored":
		default:
			continue
		}
		// What this reads of the five payloads (events.SeatLaunched,
		// SeatReconciled, the binding, SessionEnded, SeatRestored), by
		// their JSON names.
		var x struct {
			SessionID    string `json:"session_id"`
			Mode         string `json:"mode"`
			Conversation string `json:"conversation"`
			Outcome      string `json:"outcome"`
			Reason       string `json:"reason"`
		}
		if err := json.Unmarshal(e.Data, &x); err != nil {
			return nil, err
		}
		o := bySession[x.SessionID]
		switch e.Kind {
		case "launched", "reconciled":
			o = &Occupant{SessionID: x.SessionID, Mode: x.Mode, LaunchedSeq: e.Seq}
			if e.Kind == "reconciled" {
				o.Mode, o.Conversation = "reconciled", x.Conversation
			}
			bySession[x.SessionID] = o
			out = append(out, o)
		case "bound":
			if o != nil {
				o.Conversation = x.Conversation
			}
		case "ended":
			if o != nil {
				o.Ended = x.Outcome
			}
		case "restored":
			if o != nil && x.Outcome != events.SeatRunning {
				o.Outcome, o.Reason = x.Outcome, x.Reason
			}
		}
	}
	return out, nil
}

// Show returns a seat with its occupants over time, at rev.
func (m *Manager) Show(ctx context.Context, address string, at commands.Read) (*ShowResult, error) {
	if _, _, err := commands.ParseAddress(address); err != nil {
		return nil, err
	}
	live := !at.Past()
	res := &ShowResult{Occupants: []*Occupant{}}
	var show *seatState
	err := m.Env.Store.Read(ctx, func(r *events.Reader) error {
		rev, _, err := at.Resolve(r, 0)
		if err != nil {
			return err
		}
		res.ProjectRevision = rev
		if res.Seat, err = commands.RequireSeat(r.Conn, address, rev); err != nil {
			return err
		}
		if res.History, err = projections.SeatLogAt(r.Conn, address, rev); err != nil {
			return err
		}
		show = &seatState{seat: *res.Seat}
		if err := show.handResumed(r.Conn, rev); err != nil {
			return err
		}
		res.Occupants, err = occupants(res.History)
		return err
	})
	if err != nil {
		return nil, err
	}
	if live {
		show.alive = show.seat.SessionActive && m.paneAlive(ctx, &show.seat)
	}
	res.State = state(show, live)
	return res, nil
}
