package projections

import (
	"errors"
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
	ID            string `json:"id"`
	Work          string `json:"work"`
	Agent         string `json:"agent"`
	Provider      string `json:"provider"`
	Model         string `json:"model"`
	Status        string `json:"status"`
	Outcome       string `json:"outcome,omitempty"`
	StartedAt     int64  `json:"started_at"`
	StartRevision int64  `json:"start_revision"`
	EndedAt       int64  `json:"ended_at,omitempty"`
	PredecessorID string `json:"predecessor_id"`
	SuccessorID   string `json:"successor_id,omitempty"`
	// LastCheckpointID, LastCheckpointSeq and LastContextHash are read
	// from the checkpoints projection as of the same revision.
	LastCheckpointID  string `json:"last_checkpoint_id,omitempty"`
	LastCheckpointSeq int64  `json:"last_checkpoint_seq,omitempty"`
	LastContextHash   string `json:"last_context_hash,omitempty"`
	// WorkNth is the session's place among the work item's sessions in
	// the order they started (1 for the first); EndedRevision is the seq
	// of its end (0 while active), EndNth its place among the work
	// item's sessions in the order they ended. They let a reader count
	// the sessions started by a seq, or ended before one, with one index
	// seek each (countSessions).
	WorkNth       int64 `json:"-"`
	EndedRevision int64 `json:"-"`
	EndNth        int64 `json:"-"`
	// Revision is the seq of the event that produced this version.
	Revision int64 `json:"revision"`
}

type sessions struct {
	versioned[Session]
	// During a bulk rebuild, the number of sessions of each work item
	// started and ended so far (the ordinals' source, since the indexes
	// wait for the end of the rebuild).
	started, ended map[string]int64
}

func newSessions() *sessions {
	p := &sessions{}
	p.base, p.step = base{name: "sessions", version: 4, schema: "sessions", tables: []Table{
		{Name: "p_sessions", Key: []string{"session_id"}, Temporal: true},
	}, fold: []string{"p_sessions_key", "p_sessions_work_start", "p_sessions_work_end"}}, p.apply
	p.enter = func() { p.started, p.ended = map[string]int64{}, map[string]int64{} }
	p.leave = func() { p.started, p.ended = nil, nil }
	p.rows = versions[Session]{insert: putSession, load: sessionRowAt, close: func(conn *sqlite.Conn, id string, seq int64) error {
		return closeInterval(conn, "session_open_from", "session_close", ":session_id", id, seq)
	}}
	return p
}

// apply folds session starts, resumes and ends into session versions.
func (p *sessions) apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	switch pl := v.(type) {
	case *events.SessionStarted:
		nth, err := p.nth(conn, p.started, "session_started_by_work", ":until", pl.Work, e.Seq)
		if err != nil {
			return err
		}
		return p.rows.put(conn, pl.SessionID, e.Seq, &Session{
			ID: pl.SessionID, Work: pl.Work, Agent: pl.Agent, Provider: pl.Provider, Model: pl.Model,
			Status: SessionActive, StartedAt: e.OccurredAt, StartRevision: e.Seq, PredecessorID: pl.PredecessorID,
			WorkNth: nth,
		})
	case *events.SessionResumed:
		if err := p.update(conn, e.Seq, pl.SessionID, func(s *Session) { s.PredecessorID = pl.FromSession }); err != nil {
			return err
		}
		return p.update(conn, e.Seq, pl.FromSession, func(s *Session) { s.SuccessorID = pl.SessionID })
	case *events.SessionEnded:
		cur, err := p.rows.get(conn, pl.SessionID, e.Seq)
		if err != nil {
			return err
		}
		if cur == nil {
			return fmt.Errorf("session %s: not started", pl.SessionID)
		}
		if cur.EndNth == 0 { // the first end counts; the command layer allows no other
			if cur.EndNth, err = p.nth(conn, p.ended, "session_ended_by_work", ":before", cur.Work, e.Seq); err != nil {
				return err
			}
			cur.EndedRevision = e.Seq
		}
		cur.Status, cur.Outcome, cur.EndedAt, cur.Revision = SessionEnded, pl.Outcome, e.OccurredAt, e.Seq
		return p.rows.put(conn, pl.SessionID, e.Seq, cur)
	}
	return nil
}

// nth returns the ordinal the next session of work to start (or to end)
// gets: one more than those before seq. During a bulk rebuild it counts
// in memory; applied incrementally it reads the latest ordinal with one
// seek of the index the statement names.
func (p *sessions) nth(conn *sqlite.Conn, counts map[string]int64, stmt, param, work string, seq int64) (int64, error) {
	if p.rows.bulk {
		counts[work]++
		return counts[work], nil
	}
	n, err := sessionOrdinal(conn, stmt, param, work, seq)
	return n + 1, err
}

// sessionOrdinal runs one of the ordinal statements: the largest ordinal of
// work's sessions started by seq (session_started_by_work, :until) or ended
// before it (session_ended_by_work, :before), 0 when there is none. Since
// ordinals follow the log's order, that is how many there are.
func sessionOrdinal(conn *sqlite.Conn, stmt, param, work string, seq int64) (int64, error) {
	var n int64
	err := query(conn, stmt, func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(param, seq)
	}, func(st *sqlite.Stmt) error {
		n = st.ColumnInt64(0)
		return nil
	})
	return n, err
}

func putSession(conn *sqlite.Conn, s *Session, from, to int64) error {
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
		st.SetInt64(":work_nth", s.WorkNth)
		st.SetInt64(":ended_revision", s.EndedRevision)
		st.SetInt64(":end_nth", s.EndNth)
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
		setInterval(st, from, to)
	})
}

// update replaces the open version of session id with a modified copy
// stamped at seq. A session the log never started is an error: the command
// layer validates before emitting.
func (p *sessions) update(conn *sqlite.Conn, seq int64, id string, change func(s *Session)) error {
	cur, err := p.rows.get(conn, id, seq)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("session %s: not started", id)
	}
	change(cur)
	cur.Revision = seq
	return p.rows.put(conn, id, seq, cur)
}

func scanSession(st *sqlite.Stmt) *Session {
	return &Session{
		ID: st.GetText("session_id"), Work: st.GetText("work"), Agent: st.GetText("agent"),
		Provider: st.GetText("provider"), Model: st.GetText("model"), Status: st.GetText("status"),
		Outcome: st.GetText("outcome"), StartedAt: st.GetInt64("started_at"), StartRevision: st.GetInt64("start_revision"),
		EndedAt: st.GetInt64("ended_at"), PredecessorID: st.GetText("predecessor_id"), SuccessorID: st.GetText("successor_id"),
		WorkNth: st.GetInt64("work_nth"), EndedRevision: st.GetInt64("ended_revision"), EndNth: st.GetInt64("end_nth"),
		Revision: st.GetInt64("valid_from"),
	}
}

// SessionAt returns session id as of revision rev, or nil if it did not
// exist then.
func SessionAt(conn *sqlite.Conn, id string, rev int64) (*Session, error) {
	s, err := sessionRowAt(conn, id, rev)
	if err != nil || s == nil {
		return s, err
	}
	return s, enrich(conn, s, rev)
}

// enrich fills the session's latest checkpoint and context as of rev.
func enrich(conn *sqlite.Conn, s *Session, rev int64) error {
	if err := query(conn, "checkpoint_last_for_session_at", keyAt(":session_id", s.ID, rev), func(st *sqlite.Stmt) error {
		s.LastCheckpointSeq = st.GetInt64("seq")
		return nil
	}); err != nil {
		return err
	}
	if s.LastCheckpointSeq > 0 {
		var id string
		if err := events.ScanEvents(conn, s.LastCheckpointSeq, s.LastCheckpointSeq, func(e *events.Event) error { id = e.ID; return nil }); err != nil {
			return err
		}
		s.LastCheckpointID = id
	}
	return query(conn, "context_last_for_session_at", keyAt(":session_id", s.ID, rev), func(st *sqlite.Stmt) error {
		s.LastContextHash = st.GetText("context_hash")
		return nil
	})
}

// LastCheckpointSeqAt returns the seq of session id's own latest
// checkpoint at or before rev, 0 when it recorded none: one index lookup,
// what SessionAt reads of it without the rest.
func LastCheckpointSeqAt(conn *sqlite.Conn, id string, rev int64) (int64, error) {
	return queryInt64(conn, "checkpoint_last_for_session_at", "seq", keyAt(":session_id", id, rev))
}

// SessionRowAt returns session id as of rev as SessionAt does, but
// without what SessionAt reads beside its row: LastCheckpointID,
// LastCheckpointSeq and LastContextHash are empty. A write that checks a
// session's state before deciding reads this. nil when unknown.
func SessionRowAt(conn *sqlite.Conn, id string, rev int64) (*Session, error) {
	return sessionRowAt(conn, id, rev)
}

func sessionRowAt(conn *sqlite.Conn, id string, rev int64) (*Session, error) {
	return firstRow(queryRows(conn, "session_at", keyAt(":session_id", id, rev), deref(scanSession)))
}

// SessionsAt lists sessions as of rev, oldest first; work filters by work
// item when not empty.
func SessionsAt(conn *sqlite.Conn, rev int64, work string) ([]Session, error) {
	name := "session_list_at"
	if work != "" {
		name = "session_by_work_at"
	}
	out, err := queryRows(conn, name, func(st *sqlite.Stmt) {
		st.SetInt64(":rev", rev)
		if work != "" {
			st.SetText(":work", work)
		}
	}, deref(scanSession))
	if err != nil {
		return nil, err
	}
	for i := range out {
		if err := enrich(conn, &out[i], rev); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ActiveSessionsAt lists the sessions active at rev; head says rev is the
// log's head, which lets the read use the index of current active rows.
func ActiveSessionsAt(conn *sqlite.Conn, rev int64, head bool) ([]Session, error) {
	name := "session_active_at"
	if head {
		name = "session_active_head"
	}
	return queryRows(conn, name, func(st *sqlite.Stmt) {
		if !head {
			st.SetInt64(":rev", rev)
		}
	}, deref(scanSession))
}

// ActiveSessionCountAt counts the sessions active at rev; head says rev is
// the log's head, which lets the count use the index of current active rows.
func ActiveSessionCountAt(conn *sqlite.Conn, rev int64, head bool) (int, error) {
	name := "session_active_count_at"
	if head {
		name = "session_active_count_head"
	}
	n, err := queryInt64(conn, name, "n", func(st *sqlite.Stmt) {
		if !head {
			st.SetInt64(":rev", rev)
		}
	})
	return int(n), err
}

// SessionLastEventAt returns the seq and occurred_at (UTC ms) of the latest
// event on session id's own stream (its start, checkpoints, compiled
// contexts, restatements, end) at or before rev, or zeros when there is
// none. It is one index lookup, whatever rev is.
func SessionLastEventAt(conn *sqlite.Conn, id string, rev int64) (seq, at int64, err error) {
	err = query(conn, "session_last_event_at", func(st *sqlite.Stmt) {
		st.SetText(":stream", "session/"+id)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		seq, at = st.GetInt64("seq"), st.GetInt64("occurred_at")
		return nil
	})
	return seq, at, err
}

// SessionLastSeqAt returns the seq of the last event on session id's
// stream at or before rev (0 when none), reading the stream index only.
func SessionLastSeqAt(conn *sqlite.Conn, id string, rev int64) (seq int64, err error) {
	return queryInt64(conn, "session_last_seq_at", "seq", func(st *sqlite.Stmt) {
		st.SetText(":stream", "session/"+id)
		st.SetInt64(":rev", rev)
	})
}

// LatestSessionOfWorkAt returns the id of the session that started last
// on work at or before rev ("" when none did): the one whose
// session_started has the highest seq. It walks the item's session
// versions newest first by the (work, valid_from) index and stops at the
// first version older than the best start found, since a version never
// precedes its session's start: it reads the versions written since that
// start (a few), however many sessions and checkpoints came before.
func LatestSessionOfWorkAt(conn *sqlite.Conn, work string, rev int64) (string, error) {
	var id string
	var start int64
	err := query(conn, "session_latest_start_by_work_at", keyAt(":work", work, rev), func(st *sqlite.Stmt) error {
		if st.GetInt64("valid_from") < start {
			return errEnough
		}
		if s := st.GetInt64("start_revision"); s > start {
			id, start = st.GetText("session_id"), s
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return "", err
	}
	return id, nil
}

// errEnough stops a walk that has what it needs.
var errEnough = errors.New("enough")

// RecentActiveSessionsAt calls fn with the sessions active at rev (head:
// rev is the log's head): at a past revision first those whose active
// version was closed after rev (all of them), then the open active
// versions (open set), most recently versioned first, until fn returns
// false. The
// sessions carry no checkpoint or context fields. It reads the rows fn
// asks for (plus, at a past revision, the versions active then and closed
// since), not every session history left active.
func RecentActiveSessionsAt(conn *sqlite.Conn, rev int64, head bool, fn func(s *Session, open bool) bool) error {
	bind := func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }
	if !head {
		if err := query(conn, "session_active_closed_at", bind, func(st *sqlite.Stmt) error {
			fn(scanSession(st), false)
			return nil
		}); err != nil {
			return err
		}
	}
	name := "session_active_open_desc"
	if head {
		name, bind = "session_active_head_desc", func(*sqlite.Stmt) {}
	}
	err := query(conn, name, bind, func(st *sqlite.Stmt) error {
		if !fn(scanSession(st), true) {
			return errEnough
		}
		return nil
	})
	if errors.Is(err, errEnough) {
		return nil
	}
	return err
}

// SessionSpan is where a session lies in the log: from the seq that
// started it to the seq that ended it (0 while it is active).
type SessionSpan struct {
	ID    string
	Work  string
	Agent string
	From  int64
	To    int64
}

// SessionSpansAt calls fn with the span of every session as of rev, in no
// order, one row at a time (memory flat in the number of sessions).
func SessionSpansAt(conn *sqlite.Conn, rev int64, fn func(SessionSpan) error) error {
	return query(conn, "session_spans_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }, func(st *sqlite.Stmt) error {
		sp := SessionSpan{ID: st.ColumnText(0), Work: st.ColumnText(1), Agent: st.ColumnText(2), From: st.ColumnInt64(3), To: st.ColumnInt64(4)}
		if sp.To > rev {
			sp.To = 0
		}
		return fn(sp)
	})
}
