package projections

import (
	"fmt"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Session statuses.
const (
	SessionActive = "active"
	SessionEnded  = "ended"
)

// Session is the read model of one work session.
type Session struct {
	ID                string `json:"id"`
	Work              string `json:"work"`
	Agent             string `json:"agent"`
	Provider          string `json:"provider"`
	Model             string `json:"model"`
	Status            string `json:"status"`
	Outcome           string `json:"outcome,omitempty"`
	StartedAt         int64  `json:"started_at"`
	StartRevision     int64  `json:"start_revision"`
	EndedAt           int64  `json:"ended_at,omitempty"`
	PredecessorID     string `json:"predecessor_id,omitempty"`
	SuccessorID       string `json:"successor_id,omitempty"`
	LastCheckpointID  string `json:"last_checkpoint_id,omitempty"`
	LastCheckpointSeq int64  `json:"last_checkpoint_seq,omitempty"`
	LastContextHash   string `json:"last_context_hash,omitempty"`
	// Revision is the seq of the event that produced this version.
	Revision int64 `json:"revision"`
}

type sessions struct{ base }

func newSessions() *sessions {
	return &sessions{base{name: "sessions", version: 1, schema: "sessions", tables: []Table{
		{Name: "p_sessions", Key: []string{"session_id"}, Temporal: true},
	}}}
}

func (p *sessions) Apply(conn *sqlite.Conn, e *events.Event) error {
	switch e.Kind {
	case events.KindSessionStarted:
		pl, err := payload[events.SessionStarted](e)
		if err != nil {
			return err
		}
		return putSession(conn, e.Seq, &Session{
			ID: pl.SessionID, Work: pl.Work, Agent: pl.Agent, Provider: pl.Provider, Model: pl.Model,
			Status: SessionActive, StartedAt: e.OccurredAt, StartRevision: e.Seq, PredecessorID: pl.PredecessorID,
		})
	case events.KindSessionResumed:
		pl, err := payload[events.SessionResumed](e)
		if err != nil {
			return err
		}
		if err := updateSession(conn, e.Seq, pl.SessionID, func(s *Session) { s.PredecessorID = pl.FromSession }); err != nil {
			return err
		}
		return updateSession(conn, e.Seq, pl.FromSession, func(s *Session) { s.SuccessorID = pl.SessionID })
	case events.KindCheckpointRecorded:
		pl, err := payload[events.CheckpointRecorded](e)
		if err != nil {
			return err
		}
		return updateSession(conn, e.Seq, pl.SessionID, func(s *Session) {
			s.LastCheckpointID, s.LastCheckpointSeq = pl.CheckpointID, e.Seq
		})
	case events.KindContextCompiled:
		pl, err := payload[events.ContextCompiled](e)
		if err != nil {
			return err
		}
		return updateSession(conn, e.Seq, pl.SessionID, func(s *Session) { s.LastContextHash = pl.ContextHash })
	case events.KindSessionEnded:
		pl, err := payload[events.SessionEnded](e)
		if err != nil {
			return err
		}
		return updateSession(conn, e.Seq, pl.SessionID, func(s *Session) {
			s.Status, s.Outcome, s.EndedAt = SessionEnded, pl.Outcome, e.OccurredAt
		})
	}
	return nil
}

func putSession(conn *sqlite.Conn, seq int64, s *Session) error {
	return exec(conn, "session_insert", func(st *sqlite.Stmt) {
		st.SetText(":session_id", s.ID)
		st.SetText(":work", s.Work)
		st.SetText(":agent", s.Agent)
		st.SetText(":provider", s.Provider)
		st.SetText(":model", s.Model)
		st.SetText(":status", s.Status)
		st.SetText(":outcome", s.Outcome)
		st.SetInt64(":started_at", s.StartedAt)
		st.SetInt64(":start_revision", s.StartRevision)
		st.SetInt64(":ended_at", s.EndedAt)
		st.SetText(":predecessor_id", s.PredecessorID)
		st.SetText(":successor_id", s.SuccessorID)
		st.SetText(":last_checkpoint_id", s.LastCheckpointID)
		st.SetInt64(":last_checkpoint_seq", s.LastCheckpointSeq)
		st.SetText(":last_context_hash", s.LastContextHash)
		st.SetInt64(":valid_from", seq)
	})
}

// updateSession replaces the current version of session id with a modified
// copy stamped at seq. A session the log never started is an error: the
// command layer validates before emitting.
func updateSession(conn *sqlite.Conn, seq int64, id string, change func(s *Session)) error {
	cur, err := SessionAt(conn, id, seq)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("session %s: not started", id)
	}
	change(cur)
	if cur.Revision == seq {
		// One event changes a session at most once.
		return fmt.Errorf("session %s: changed twice by seq %d", id, seq)
	}
	if err := exec(conn, "session_close", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", seq)
		st.SetText(":session_id", id)
	}); err != nil {
		return err
	}
	return putSession(conn, seq, cur)
}

func scanSession(st *sqlite.Stmt) *Session {
	return &Session{
		ID: st.GetText("session_id"), Work: st.GetText("work"), Agent: st.GetText("agent"),
		Provider: st.GetText("provider"), Model: st.GetText("model"), Status: st.GetText("status"),
		Outcome: st.GetText("outcome"), StartedAt: st.GetInt64("started_at"), StartRevision: st.GetInt64("start_revision"),
		EndedAt: st.GetInt64("ended_at"), PredecessorID: st.GetText("predecessor_id"), SuccessorID: st.GetText("successor_id"),
		LastCheckpointID: st.GetText("last_checkpoint_id"), LastCheckpointSeq: st.GetInt64("last_checkpoint_seq"),
		LastContextHash: st.GetText("last_context_hash"), Revision: st.GetInt64("valid_from"),
	}
}

// SessionAt returns session id as of revision rev, or nil if it did not
// exist then.
func SessionAt(conn *sqlite.Conn, id string, rev int64) (*Session, error) {
	var out *Session
	err := query(conn, "session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", id)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		out = scanSession(st)
		return nil
	})
	return out, err
}

// SessionsAt lists sessions as of rev, oldest first; work filters by work
// item when not empty.
func SessionsAt(conn *sqlite.Conn, rev int64, work string) ([]Session, error) {
	var out []Session
	name := "session_list_at"
	if work != "" {
		name = "session_by_work_at"
	}
	err := query(conn, name, func(st *sqlite.Stmt) {
		st.SetInt64(":rev", rev)
		if work != "" {
			st.SetText(":work", work)
		}
	}, func(st *sqlite.Stmt) error {
		out = append(out, *scanSession(st))
		return nil
	})
	return out, err
}
