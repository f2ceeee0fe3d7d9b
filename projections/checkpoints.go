package projections

import (
	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Checkpoint is the read model of one recorded checkpoint. Checkpoints are
// immutable: a row is written once, at its seq.
type Checkpoint struct {
	ID                  string   `json:"id"`
	Seq                 int64    `json:"seq"`
	SessionID           string   `json:"session_id"`
	Work                string   `json:"work"`
	Agent               string   `json:"agent"`
	ContextHash         string   `json:"context_hash"`
	ContextHashVerified bool     `json:"context_hash_verified"`
	Digest              string   `json:"digest"`
	NextAction          string   `json:"next_action"`
	OpenLoops           []string `json:"open_loops"`
	RecordedAt          int64    `json:"recorded_at"`
}

type checkpoints struct {
	base
	bulk bool
	seq  int64 // last seq applied, in bulk mode
	// In bulk mode: each session's latest checkpoint and compiled context,
	// and the latest seq at which a context hash was compiled for a
	// session (key session_id NUL context_hash).
	last        map[string]checkpointRef
	lastContext map[string]string
	contexts    map[string]int64
}

// checkpointRef locates a checkpoint: its event's seq and id.
type checkpointRef struct {
	seq int64
	id  string
}

// BeginBulk starts a rebuild; the tables are written as events come, the
// indexes wait for EndBulk, and the latest checkpoint and contexts of each
// session are kept in memory for reads at the head.
func (p *checkpoints) BeginBulk(conn *sqlite.Conn) error {
	p.bulk = true
	p.last, p.lastContext, p.contexts = map[string]checkpointRef{}, map[string]string{}, map[string]int64{}
	enterBulk(conn, func(v *bulkView) { v.checkpoints = p })
	return p.base.BeginBulk(conn)
}

// EndBulk drops the in-memory state and creates the indexes.
func (p *checkpoints) EndBulk(conn *sqlite.Conn) error {
	p.AbortBulk(conn)
	return p.base.EndBulk(conn)
}

// AbortBulk drops the in-memory state of a bulk build.
func (p *checkpoints) AbortBulk(conn *sqlite.Conn) {
	p.bulk, p.last, p.lastContext, p.contexts = false, nil, nil, nil
	leaveBulk(conn, func(v *bulkView) { v.checkpoints = nil })
}

// The checkpoints projection indexes which events are checkpoints and
// compiled contexts of which session; the checkpoint itself is read from
// its event, which is immutable (the checkpoint id is the event id).
func newCheckpoints() *checkpoints {
	return &checkpoints{base: base{name: "checkpoints", version: 2, schema: "checkpoints", tables: []Table{
		{Name: "p_checkpoints", Key: []string{"seq"}},
		{Name: "p_contexts", Key: []string{"seq"}},
	}}}
}

// Apply indexes checkpoint_recorded and context_compiled events by session.
func (p *checkpoints) Apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	p.seq = e.Seq
	switch e.Kind {
	case events.KindCheckpointRecorded:
		pl, err := payload[events.CheckpointRecorded](e, v)
		if err != nil {
			return err
		}
		if p.bulk {
			p.last[pl.SessionID] = checkpointRef{seq: e.Seq, id: e.ID}
		}
		return exec(conn, "checkpoint_insert", func(st *sqlite.Stmt) {
			st.SetInt64(":seq", e.Seq)
			st.SetText(":session_id", pl.SessionID)
		})
	case events.KindContextCompiled:
		pl, err := payload[events.ContextCompiled](e, v)
		if err != nil {
			return err
		}
		if p.bulk {
			p.lastContext[pl.SessionID] = pl.ContextHash
			p.contexts[pl.SessionID+"\x00"+pl.ContextHash] = e.Seq
		}
		return exec(conn, "context_insert", func(st *sqlite.Stmt) {
			st.SetInt64(":seq", e.Seq)
			st.SetText(":session_id", pl.SessionID)
			st.SetText(":context_hash", pl.ContextHash)
		})
	}
	return nil
}

// checkpointOf builds the read model from a checkpoint_recorded event.
func checkpointOf(e *events.Event) (*Checkpoint, error) {
	pl, err := decode[events.CheckpointRecorded](e)
	if err != nil {
		return nil, err
	}
	loops := pl.OpenLoops
	if loops == nil {
		loops = []string{}
	}
	return &Checkpoint{
		ID: pl.CheckpointID, Seq: e.Seq, SessionID: pl.SessionID, Work: pl.Work, Agent: pl.Agent,
		ContextHash: pl.ContextHash, ContextHashVerified: pl.ContextHashVerified, Digest: pl.Digest,
		NextAction: pl.NextAction, OpenLoops: loops, RecordedAt: e.OccurredAt,
	}, nil
}

// CheckpointAt returns checkpoint id if it was recorded by rev, or nil.
func CheckpointAt(conn *sqlite.Conn, id string, rev int64) (*Checkpoint, error) {
	var out *Checkpoint
	err := query(conn, "checkpoint_by_id_at", func(st *sqlite.Stmt) {
		st.SetText(":checkpoint_id", id)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) (err error) {
		out, err = checkpointOf(events.EventFromRow(st))
		return err
	})
	return out, err
}

// SessionCheckpointsAt lists a session's checkpoints recorded by rev, oldest
// first.
func SessionCheckpointsAt(conn *sqlite.Conn, session string, rev int64) ([]Checkpoint, error) {
	var out []Checkpoint
	err := query(conn, "checkpoint_by_session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		c, err := checkpointOf(events.EventFromRow(st))
		if err != nil {
			return err
		}
		out = append(out, *c)
		return nil
	})
	return out, err
}

// ContextCompiledFor returns the seq at which contextHash was compiled for
// session by rev, or 0 when it never was.
func ContextCompiledFor(conn *sqlite.Conn, session, contextHash string, rev int64) (int64, error) {
	if v := viewOf(conn); v != nil && v.checkpoints != nil {
		if err := atHead("compiled context", rev, v.checkpoints.seq); err != nil {
			return 0, err
		}
		return v.checkpoints.contexts[session+"\x00"+contextHash], nil
	}
	var seq int64
	err := query(conn, "context_for_session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetText(":context_hash", contextHash)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		seq = st.GetInt64("seq")
		return nil
	})
	return seq, err
}
