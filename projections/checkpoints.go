package projections

import (
	"fmt"
	"slices"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Checkpoint is the read model of one recorded checkpoint. Checkpoints are
// immutable: a row is written once, at its seq.
type Checkpoint struct {
	ID                  string `json:"id"`
	Seq                 int64  `json:"seq"`
	SessionID           string `json:"session_id"`
	Work                string `json:"work"`
	Agent               string `json:"agent"`
	ContextHash         string `json:"context_hash"`
	ContextHashVerified bool   `json:"context_hash_verified"`
	Digest              string `json:"digest"`
	NextAction          string `json:"next_action"`
	ContextHashNote     string `json:"context_hash_note,omitempty"`
	// Changes is what the checkpoint did to the work item's loops,
	// decisions, facts and hypotheses.
	Changes []events.KnowledgeChange `json:"changes"`
	// OpenLoops holds the loop texts of a checkpoint written before
	// knowledge ids (each opened a loop unless one was open with it).
	OpenLoops  []string `json:"open_loops,omitempty"`
	RecordedAt int64    `json:"recorded_at"`
	// Repo is the repository the checkpoint recorded (nil in logs written
	// before awr recorded it).
	Repo *events.RepoRecord `json:"repo,omitempty"`
}

// checkpoints holds no rows in memory: in a bulk rebuild its tables are
// written as events come and only its indexes wait for EndBulk.
type checkpoints struct{ base }

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
	switch pl := v.(type) {
	case *events.CheckpointRecorded:
		return exec(conn, "checkpoint_insert", func(st *sqlite.Stmt) {
			st.SetInt64(":seq", e.Seq)
			st.SetText(":session_id", pl.SessionID)
		})
	case *events.ContextCompiled:
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
	changes := pl.Changes
	if changes == nil {
		changes = []events.KnowledgeChange{}
	}
	return &Checkpoint{
		ID: pl.CheckpointID, Seq: e.Seq, SessionID: pl.SessionID, Work: pl.Work, Agent: pl.Agent,
		ContextHash: pl.ContextHash, ContextHashVerified: pl.ContextHashVerified, Digest: pl.Digest,
		NextAction: pl.NextAction, ContextHashNote: pl.ContextHashNote, Changes: changes, OpenLoops: pl.OpenLoops, RecordedAt: e.OccurredAt, Repo: pl.Repo,
	}, nil
}

// scanCheckpoint reads the checkpoint of a row of the events table.
func scanCheckpoint(st *sqlite.Stmt) (Checkpoint, error) {
	c, err := checkpointOf(events.EventFromRow(st))
	if err != nil {
		return Checkpoint{}, err
	}
	return *c, nil
}

// CheckpointAt returns checkpoint id if it was recorded by rev, or nil.
func CheckpointAt(conn *sqlite.Conn, id string, rev int64) (*Checkpoint, error) {
	return firstRow(queryRows(conn, "checkpoint_by_id_at", keyAt(":checkpoint_id", id, rev), scanCheckpoint))
}

// SessionCheckpointsAt lists a session's checkpoints recorded by rev, oldest
// first.
func SessionCheckpointsAt(conn *sqlite.Conn, session string, rev int64) ([]Checkpoint, error) {
	return queryRows(conn, "checkpoint_by_session_at", keyAt(":session_id", session, rev), scanCheckpoint)
}

// SessionLatestCheckpointsAt lists the latest n of a session's checkpoints
// recorded by rev, oldest first: what a packet shows reads n rows, however
// many checkpoints the session recorded.
func SessionLatestCheckpointsAt(conn *sqlite.Conn, session string, rev int64, n int) ([]Checkpoint, error) {
	if n <= 0 {
		return nil, nil
	}
	out, err := queryRows(conn, "checkpoint_latest_by_session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetInt64(":rev", rev)
		st.SetInt64(":limit", int64(n))
	}, scanCheckpoint)
	slices.Reverse(out)
	return out, err
}

// ContextCompiledFor returns the seq at which contextHash was compiled for
// session by rev, or 0 when it never was.
func ContextCompiledFor(conn *sqlite.Conn, session, contextHash string, rev int64) (int64, error) {
	return queryInt64(conn, "context_for_session_at", "seq", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetText(":context_hash", contextHash)
		st.SetInt64(":rev", rev)
	})
}

// ChainCheckpointAt returns the latest checkpoint of session's chain as of
// rev: the session's own, or the one it inherited back along its
// predecessors; nil when none recorded one.
func ChainCheckpointAt(conn *sqlite.Conn, session string, rev int64) (*Checkpoint, error) {
	seen := map[string]bool{}
	for id := session; id != "" && !seen[id]; {
		seen[id] = true
		s, err := SessionAt(conn, id, rev)
		if err != nil || s == nil {
			return nil, err
		}
		if s.LastCheckpointID != "" {
			return CheckpointAt(conn, s.LastCheckpointID, rev)
		}
		id = s.PredecessorID
	}
	return nil, nil
}

// SessionStartOf returns the session_started payload of s (its working
// directory and starting repository).
func SessionStartOf(conn *sqlite.Conn, s *Session) (*events.SessionStarted, error) {
	var out *events.SessionStarted
	err := events.ScanEvents(conn, s.StartRevision, s.StartRevision, func(e *events.Event) error {
		v, err := decode[events.SessionStarted](e)
		out = v
		return err
	})
	if err == nil && out == nil {
		err = fmt.Errorf("session %s: no session_started at seq %d", s.ID, s.StartRevision)
	}
	return out, err
}
