package projections

import (
	"encoding/json"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// worklog indexes the events that concern each work item: its claims
// (stream work/KEY), every event of the sessions that work on it (their
// session streams) and the bindings of host conversations to those
// sessions. Rows are only ever added, so a read at any revision is a range
// of the (work, seq) index: `awr log --work`, the history and the latest
// checkpoints of a context packet, and recovery cost what they return, not
// the size of the item's history.
type worklog struct{ base }

func newWorklog() *worklog {
	return &worklog{base: base{name: "worklog", version: 2, schema: "worklog", tables: []Table{
		{Name: "p_work_log", Key: []string{"seq"}},
	}}}
}

// Apply records the event under its work item when it has one: claims,
// session lifecycle, contexts, checkpoints, bindings and restatement
// checks, evidence and verifications.
func (p *worklog) Apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	var work string
	switch pl := v.(type) {
	case *events.ClaimAcquired:
		work = pl.Work
	case *events.ClaimRenewed:
		work = pl.Work
	case *events.ClaimReleased:
		work = pl.Work
	case *events.SessionStarted:
		work = pl.Work
	case *events.SessionResumed:
		work = pl.Work
	case *events.ContextCompiled:
		work = pl.Work
	case *events.CheckpointRecorded:
		work = pl.Work
	case *events.SessionEnded:
		work = pl.Work
	case *events.ClientBound:
		work = pl.Work
	case *events.RestatementChecked:
		work = pl.Work
	case *events.EvidenceRecorded:
		work = pl.Work
	case *events.WorkVerified:
		work = pl.Work
	case *events.ExecutionStarted:
		work = pl.Work
	case *events.ExecutionFinished:
		work = pl.Work
	}
	if work == "" {
		return nil
	}
	return exec(conn, "worklog_insert", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":seq", e.Seq)
		st.SetText(":kind", string(e.Kind))
	})
}

// WorkEventsAt returns up to limit events of work at rev (of one kind when
// kind is not empty), newest first; a negative limit returns them all.
func WorkEventsAt(conn *sqlite.Conn, work string, kind events.Kind, rev int64, limit int) ([]*events.Event, error) {
	var out []*events.Event
	err := query(conn, "worklog_events_desc", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":rev", rev)
		if kind == "" {
			st.SetNull(":kind")
		} else {
			st.SetText(":kind", string(kind))
		}
		st.SetInt64(":limit", int64(limit))
	}, func(st *sqlite.Stmt) error {
		out = append(out, events.EventFromRow(st))
		return nil
	})
	return out, err
}

// LatestCheckpointsOfWorkAt returns the last n checkpoints recorded on
// work at rev, oldest first.
func LatestCheckpointsOfWorkAt(conn *sqlite.Conn, work string, rev int64, n int) ([]Checkpoint, error) {
	evs, err := WorkEventsAt(conn, work, events.KindCheckpointRecorded, rev, n)
	if err != nil {
		return nil, err
	}
	out := make([]Checkpoint, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		c, err := checkpointOf(evs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *c)
	}
	return out, nil
}

// WorkHistoryAt returns the events that concern work in (since, rev],
// oldest first, at most limit: those the worklog indexes and the
// source_indexed events that changed the item (began or ended one of its
// versions), of the given kinds when kinds is not empty.
func WorkHistoryAt(conn *sqlite.Conn, work string, since, rev int64, kinds []string, limit int) ([]*events.Event, error) {
	var out []*events.Event
	ks, err := json.Marshal(kinds)
	if err != nil {
		return nil, err
	}
	err = query(conn, "work_history", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":since", since)
		st.SetInt64(":rev", rev)
		if len(kinds) == 0 {
			st.SetNull(":kinds")
		} else {
			st.SetText(":kinds", string(ks))
		}
		st.SetInt64(":limit", int64(limit))
	}, func(st *sqlite.Stmt) error {
		out = append(out, events.EventFromRow(st))
		return nil
	})
	return out, err
}
