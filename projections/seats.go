package projections

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Seat is a seat's declaration and what its occupants did, as of a
// revision: the session launched for it last, the conversation its agent
// reported, the last stop request and the last restore outcome.
type Seat struct {
	events.SeatDeclared
	// SessionID is the session launched for the seat last.
	SessionID   string `json:"session_id,omitempty"`
	ClaimID     string `json:"claim_id,omitempty"`
	TmuxSession string `json:"tmux_session,omitempty"`
	ContextFile string `json:"context_file,omitempty"`
	LaunchMode  string `json:"launch_mode,omitempty"`
	LaunchedSeq int64  `json:"launched_seq,omitempty"`
	// ExpectedConversation is the id the last launch asked the agent to
	// use (resume by id, or a pre-assigned new one).
	ExpectedConversation string `json:"expected_conversation,omitempty"`
	// Conversation is the id the agent of the current session reported
	// with `awr client bind` (empty until it does).
	Conversation string `json:"conversation,omitempty"`
	Host         string `json:"host,omitempty"`
	// LastConversation is the last id any occupant reported; it survives
	// relaunches, so a seat knows which conversation it may resume.
	LastConversation string `json:"last_conversation,omitempty"`
	LastHost         string `json:"last_host,omitempty"`
	// SessionActive: the launched session has not ended.
	SessionActive    bool   `json:"session_active"`
	StopRequestedSeq int64  `json:"stop_requested_seq,omitempty"`
	LastOutcome      string `json:"last_outcome,omitempty"`
	LastReason       string `json:"last_reason,omitempty"`
	LastRestoreID    string `json:"last_restore_id,omitempty"`
	LastOutcomeSeq   int64  `json:"last_outcome_seq,omitempty"`
	// RestoredIn, RestoredSeq, RestoredOutcome and RestoredReason are the
	// seat's latest seat_restored (running included), so an outcome is
	// recorded once per attempt and launch.
	RestoredIn      string `json:"restored_in,omitempty"`
	RestoredSeq     int64  `json:"restored_seq,omitempty"`
	RestoredOutcome string `json:"restored_outcome,omitempty"`
	RestoredReason  string `json:"restored_reason,omitempty"`
	Decision        string `json:"decision,omitempty"`
	DecisionScope   string `json:"decision_scope,omitempty"`
	// LaunchRepo is the repository the last launch recorded.
	LaunchRepo *events.SeatRepo `json:"launch_repo,omitempty"`
	// AttentionSeq, AttentionReason and AttentionRestoreID are the first
	// attention_required outcome nobody has answered yet (awr seat
	// clear-attention answers it); AttentionSeq is 0 when none is pending.
	AttentionSeq       int64  `json:"attention_seq,omitempty"`
	AttentionReason    string `json:"attention_reason,omitempty"`
	AttentionRestoreID string `json:"attention_restore_id,omitempty"`
	Revision           int64  `json:"revision"`
}

// SeatLogEntry is one thing that happened to a seat: declared, launched,
// bound, stop requested, ended, restored, decided, removed.
type SeatLogEntry struct {
	Seq     int64           `json:"seq"`
	Address string          `json:"address"`
	Kind    string          `json:"kind"`
	Data    json.RawMessage `json:"data"`
}

// RigLogEntry is a snapshot or a restore step of a rig.
type RigLogEntry struct {
	Seq  int64           `json:"seq"`
	Rig  string          `json:"rig"`
	Kind string          `json:"kind"`
	Ref  string          `json:"ref"`
	Data json.RawMessage `json:"data"`
}

type seats struct {
	versioned[Seat]
}

func newSeats() *seats {
	p := &seats{}
	p.base, p.step = base{name: "seats", version: 3, schema: "seats", tables: []Table{
		{Name: "p_seats", Key: []string{"address"}, Temporal: true},
		{Name: "p_seat_sessions", Key: []string{"session_id"}},
		{Name: "p_seat_log", Key: []string{"seq"}},
		{Name: "p_rig_log", Key: []string{"seq"}},
	}}, p.apply
	p.rows = versions[Seat]{insert: putSeat, load: SeatAt, close: closeOpen("seat_close", ":address")}
	return p
}

// apply folds seat, rig and the seat sessions' lifecycle events.
func (p *seats) apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	switch e.Kind {
	case events.KindSeatDeclared:
		return fold(e, v, func(pl *events.SeatDeclared) error { return p.declared(conn, e, pl) })
	case events.KindSeatRemoved:
		return fold(e, v, func(pl *events.SeatRemoved) error {
			if err := p.log(conn, e, pl.Address, pl.Rig, "removed", pl); err != nil {
				return err
			}
			return p.rows.drop(conn, pl.Address, e.Seq)
		})
	case events.KindSeatLaunched:
		return fold(e, v, func(pl *events.SeatLaunched) error { return p.launched(conn, e, pl) })
	case events.KindStopRequested:
		return fold(e, v, func(pl *events.StopRequested) error {
			return p.change(conn, e, pl.Address, "stop_requested", pl, func(s *Seat) { s.StopRequestedSeq = e.Seq }, nil)
		})
	case events.KindSeatRestored:
		return fold(e, v, func(pl *events.SeatRestored) error {
			return p.change(conn, e, pl.Address, "restored", pl, func(s *Seat) { restored(s, e, pl) }, nil)
		})
	case events.KindSeatDecided:
		return fold(e, v, func(pl *events.SeatDecided) error {
			return p.change(conn, e, pl.Address, "decided", pl, func(s *Seat) { s.Decision, s.DecisionScope = pl.Decision, pl.Scope }, nil)
		})
	case events.KindSeatAttentionCleared:
		return fold(e, v, func(pl *events.SeatAttentionCleared) error {
			return p.change(conn, e, pl.Address, "attention_cleared", pl, func(s *Seat) {
				s.AttentionSeq, s.AttentionReason, s.AttentionRestoreID = 0, "", ""
			}, nil)
		})
	case events.KindSeatReconciled:
		return fold(e, v, func(pl *events.SeatReconciled) error { return p.reconciled(conn, e, pl) })
	case events.KindClientBound:
		return fold(e, v, func(pl *events.ClientBound) error {
			host, id, _ := strings.Cut(pl.ExternalSession, ":")
			return p.sessionEvent(conn, e, pl.SessionID, "bound", map[string]string{"session_id": pl.SessionID, "conversation": id, "host": host}, func(s *Seat) {
				s.Conversation, s.Host, s.LastConversation, s.LastHost = id, host, id, host
			})
		})
	case events.KindSessionEnded:
		return fold(e, v, func(pl *events.SessionEnded) error {
			return p.sessionEvent(conn, e, pl.SessionID, "ended", pl, func(s *Seat) { s.SessionActive = false })
		})
	case events.KindRigSnapshotTaken:
		return fold(e, v, func(pl *events.RigSnapshotTaken) error { return p.rigLog(conn, e, pl.Rig, pl.SnapshotID, pl) })
	case events.KindRestoreStarted:
		return fold(e, v, func(pl *events.RestoreStarted) error { return p.rigLog(conn, e, pl.Rig, pl.RestoreID, pl) })
	case events.KindRestoreCompleted:
		return fold(e, v, func(pl *events.RestoreCompleted) error { return p.rigLog(conn, e, pl.Rig, pl.RestoreID, pl) })
	}
	return nil
}

// declared folds a seat's declaration (a new seat, or a changed one).
func (p *seats) declared(conn *sqlite.Conn, e *events.Event, pl *events.SeatDeclared) error {
	s, err := p.rows.get(conn, pl.Address, e.Seq)
	if err != nil {
		return err
	}
	if s == nil {
		s = &Seat{}
	}
	s.SeatDeclared = *pl
	return p.update(conn, e, s, "declared", pl)
}

// launched folds a launch: the seat's session, claim, pane and the
// conversation it expects.
func (p *seats) launched(conn *sqlite.Conn, e *events.Event, pl *events.SeatLaunched) error {
	return p.change(conn, e, pl.Address, "launched", pl, func(s *Seat) {
		s.SessionID, s.ClaimID, s.TmuxSession, s.ContextFile = pl.SessionID, pl.ClaimID, pl.TmuxSession, pl.ContextFile
		s.LaunchMode, s.LaunchedSeq, s.ExpectedConversation = pl.Mode, e.Seq, pl.Conversation
		s.Conversation, s.Host, s.SessionActive, s.StopRequestedSeq = "", "", true, 0
		s.LaunchRepo = pl.Repo
	}, func() error { return p.sessionOf(conn, e, pl.SessionID, pl.Address) })
}

// restored folds a restore's outcome for the seat into s.
func restored(s *Seat, e *events.Event, pl *events.SeatRestored) {
	s.RestoredIn, s.RestoredSeq, s.RestoredOutcome, s.RestoredReason = pl.RestoreID, e.Seq, pl.Outcome, pl.Reason
	if pl.Outcome == events.SeatRunning {
		// Nothing was launched: the outcome of the launch that
		// runs stays the seat's last outcome.
		return
	}
	s.LastOutcome, s.LastReason, s.LastRestoreID, s.LastOutcomeSeq = pl.Outcome, pl.Reason, pl.RestoreID, e.Seq
	if pl.Outcome == events.SeatAttentionRequired && s.AttentionSeq == 0 {
		// Pending until a person answers it; later restores that
		// repeat it keep the first.
		s.AttentionSeq, s.AttentionReason, s.AttentionRestoreID = e.Seq, pl.Reason, pl.RestoreID
	}
	if pl.Outcome == events.SeatAwaitingDecision && pl.Evidence != nil && pl.Evidence.ReportedConv != "" {
		// The id the agent came back with was not the seat's
		// conversation: the seat keeps the one it had.
		s.Conversation, s.LastConversation = "", pl.Conversation
	}
}

// reconciled folds the adoption of a hand-resumed session.
func (p *seats) reconciled(conn *sqlite.Conn, e *events.Event, pl *events.SeatReconciled) error {
	return p.change(conn, e, pl.Address, "reconciled", pl, func(s *Seat) {
		// The adopted session is the seat's as a launch's would be:
		// its later events change the seat, a concurrent launch
		// prepared before it conflicts, and its repository is the
		// reference the next restore compares with.
		s.SessionID, s.ClaimID, s.SessionActive, s.StopRequestedSeq = pl.SessionID, pl.ClaimID, pl.SessionActive, 0
		s.LaunchedSeq, s.LaunchRepo, s.ExpectedConversation = e.Seq, pl.Repo, pl.Conversation
		s.Conversation, s.Host = pl.Conversation, pl.Host
		if pl.Conversation != "" {
			s.LastConversation, s.LastHost = pl.Conversation, pl.Host
		}
	}, func() error { return p.sessionOf(conn, e, pl.SessionID, pl.Address) })
}

// sessionOf records that session is the seat's at address from e on.
func (p *seats) sessionOf(conn *sqlite.Conn, e *events.Event, session, address string) error {
	return exec(conn, "seat_session_insert", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetText(":address", address)
		st.SetInt64(":seq", e.Seq)
	})
}

// sessionEvent applies an event about a session that a seat launched: it
// is logged for the seat, and changes the seat only while that session is
// still the seat's current one.
func (p *seats) sessionEvent(conn *sqlite.Conn, e *events.Event, session, kind string, data any, fn func(s *Seat)) error {
	address, err := SeatOfSession(conn, session)
	if err != nil || address == "" {
		return err
	}
	s, err := p.rows.get(conn, address, e.Seq)
	if err != nil || s == nil {
		return err
	}
	if err := p.log(conn, e, address, s.Rig, kind, data); err != nil {
		return err
	}
	if s.SessionID != session {
		return nil
	}
	fn(s)
	s.Revision = e.Seq
	return p.rows.put(conn, address, e.Seq, s)
}

// change applies fn to a declared seat; events for a seat that is not
// declared (removed meanwhile) are logged only.
func (p *seats) change(conn *sqlite.Conn, e *events.Event, address, kind string, data any, fn func(s *Seat), also func() error) error {
	s, err := p.rows.get(conn, address, e.Seq)
	if err != nil {
		return err
	}
	if also != nil {
		if err := also(); err != nil {
			return err
		}
	}
	if s == nil {
		rig := ""
		if _, r, ok := strings.Cut(address, "@"); ok {
			rig = r
		}
		return p.log(conn, e, address, rig, kind, data)
	}
	fn(s)
	return p.update(conn, e, s, kind, data)
}

func (p *seats) update(conn *sqlite.Conn, e *events.Event, s *Seat, kind string, data any) error {
	s.Revision = e.Seq
	if err := p.log(conn, e, s.Address, s.Rig, kind, data); err != nil {
		return err
	}
	return p.rows.put(conn, s.Address, e.Seq, s)
}

func (p *seats) log(conn *sqlite.Conn, e *events.Event, address, rig, kind string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return exec(conn, "seat_log_insert", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", e.Seq)
		st.SetText(":address", address)
		st.SetText(":rig", rig)
		st.SetText(":kind", kind)
		st.SetText(":data", string(raw))
	})
}

func (p *seats) rigLog(conn *sqlite.Conn, e *events.Event, rig, ref string, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return err
	}
	return exec(conn, "rig_log_insert", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", e.Seq)
		st.SetText(":rig", rig)
		st.SetText(":kind", string(e.Kind))
		st.SetText(":ref", ref)
		st.SetText(":data", string(raw))
	})
}

func putSeat(conn *sqlite.Conn, s *Seat, from, to int64) error {
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return exec(conn, "seat_insert", func(st *sqlite.Stmt) {
		st.SetText(":address", s.Address)
		st.SetText(":rig", s.Rig)
		st.SetText(":data", string(raw))
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
	})
}

func scanSeat(st *sqlite.Stmt) (Seat, error) {
	var s Seat
	if err := json.Unmarshal([]byte(st.GetText("data")), &s); err != nil {
		return s, fmt.Errorf("seat %s: %w", st.GetText("address"), err)
	}
	s.Revision = st.GetInt64("valid_from")
	return s, nil
}

// SeatAt returns the seat at address as of rev, or nil.
func SeatAt(conn *sqlite.Conn, address string, rev int64) (*Seat, error) {
	var out *Seat
	err := query(conn, "seat_at", keyAt(":address", address, rev), func(st *sqlite.Stmt) error {
		s, err := scanSeat(st)
		out = &s
		return err
	})
	return out, err
}

// SeatsAt lists the seats of rig (every rig when rig is empty) at rev,
// ordered by rig and address.
func SeatsAt(conn *sqlite.Conn, rig string, rev int64) ([]Seat, error) {
	return queryRows(conn, "seat_list_at", keyAt(":rig", rig, rev), scanSeat)
}

// SeatLogAt lists what happened to the seat at address up to rev.
func SeatLogAt(conn *sqlite.Conn, address string, rev int64) ([]SeatLogEntry, error) {
	return queryRows(conn, "seat_log_at", keyAt(":address", address, rev), always(func(st *sqlite.Stmt) SeatLogEntry {
		return SeatLogEntry{Seq: st.GetInt64("seq"), Address: st.GetText("address"), Kind: st.GetText("kind"), Data: json.RawMessage(st.GetText("data"))}
	}))
}

// RigLogAt lists a rig's snapshots and restore steps up to rev.
func RigLogAt(conn *sqlite.Conn, rig string, rev int64) ([]RigLogEntry, error) {
	return queryRows(conn, "rig_log_at", keyAt(":rig", rig, rev), always(func(st *sqlite.Stmt) RigLogEntry {
		return RigLogEntry{Seq: st.GetInt64("seq"), Rig: st.GetText("rig"), Kind: st.GetText("kind"), Ref: st.GetText("ref"), Data: json.RawMessage(st.GetText("data"))}
	}))
}

// RestoreCompletedAt reports whether restore attempt id of rig completed
// at or before rev.
func RestoreCompletedAt(conn *sqlite.Conn, rig, id string, rev int64) (bool, error) {
	found := false
	err := query(conn, "rig_log_completed", func(st *sqlite.Stmt) {
		st.SetText(":rig", rig)
		st.SetText(":ref", id)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		found = true
		return nil
	})
	return found, err
}

// SeatOfSession returns the address of the seat that launched or adopted
// session, or "" when no seat did. A seat removed later still owns it.
func SeatOfSession(conn *sqlite.Conn, session string) (string, error) {
	address := ""
	err := query(conn, "seat_session_lookup", func(st *sqlite.Stmt) { st.SetText(":session_id", session) }, func(st *sqlite.Stmt) error {
		address = st.GetText("address")
		return nil
	})
	return address, err
}
