package projections

import (
	"encoding/json"
	"sort"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// worklog indexes the events that concern each work item: its claims
// (stream work/KEY), every event of the sessions that work on it (their
// session streams) and the bindings of host conversations to those
// sessions. Rows are only ever added, so a read at any revision is a range
// of the table's (work, seq) key: `awr log --work`, the history and the
// latest checkpoints of a context packet, and recovery cost what they
// return, not the size of the item's history.
//
// The table is clustered on (work, seq) (WITHOUT ROWID): the rows are the
// index, with no second B-tree to build. A bulk rebuild holds up to
// worklogBatch rows in memory, grouped by work item, and writes them in
// key order whenever that many are held and at the end, so every insert
// lands at the end of its work item's range of the B-tree and the
// memory held stays bounded however long the log.
type worklog struct {
	base
	bulk  bool
	rows  map[string][]workLogRow
	held  int
	batch int               // worklogBatch, or fewer in the tests
	names map[string]string // interned work keys and kinds
}

// worklogBatch is how many rows a bulk rebuild holds before it writes
// them (24 bytes each, a few MiB).
const worklogBatch = 1 << 16

type workLogRow struct {
	seq  int64
	kind string
}

func newWorklog() *worklog {
	return &worklog{base: base{name: "worklog", version: 3, schema: "worklog", tables: []Table{
		{Name: "p_work_log", Key: []string{"work", "seq"}},
	}}, batch: worklogBatch}
}

// BeginBulk starts a rebuild with the rows held in memory.
func (p *worklog) BeginBulk(conn *sqlite.Conn) error {
	p.bulk, p.rows, p.held, p.names = true, map[string][]workLogRow{}, 0, map[string]string{}
	return p.base.BeginBulk(conn)
}

// AbortBulk drops the rows of a failed bulk build.
func (p *worklog) AbortBulk(conn *sqlite.Conn) {
	p.bulk, p.rows, p.held, p.names = false, nil, 0, nil
}

// EndBulk writes the rows still held.
func (p *worklog) EndBulk(conn *sqlite.Conn) error {
	err := p.flush(conn)
	p.bulk, p.rows, p.held, p.names = false, nil, 0, nil
	return err
}

// flush writes the held rows in (work, seq) order and holds none.
func (p *worklog) flush(conn *sqlite.Conn) error {
	works := make([]string, 0, len(p.rows))
	for w := range p.rows {
		works = append(works, w)
	}
	sort.Strings(works)
	for _, w := range works {
		// Rows were added in seq order.
		for _, r := range p.rows[w] {
			if err := insertWorkLog(conn, w, r.seq, r.kind); err != nil {
				return err
			}
		}
	}
	clear(p.rows)
	p.held = 0
	return nil
}

func (p *worklog) intern(s string) string {
	if v, ok := p.names[s]; ok {
		return v
	}
	p.names[s] = s
	return s
}

func insertWorkLog(conn *sqlite.Conn, work string, seq int64, kind string) error {
	return exec(conn, "worklog_insert", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":seq", seq)
		st.SetText(":kind", kind)
	})
}

// Apply records the event under its work item when it has one: claims,
// session lifecycle, contexts, checkpoints, bindings and restatement
// checks, evidence and verifications.
func (p *worklog) Apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	work := workOf(v)
	if work == "" {
		return nil
	}
	if p.bulk {
		work = p.intern(work)
		p.rows[work] = append(p.rows[work], workLogRow{seq: e.Seq, kind: p.intern(string(e.Kind))})
		if p.held++; p.held >= p.batch {
			return p.flush(conn)
		}
		return nil
	}
	return insertWorkLog(conn, work, e.Seq, string(e.Kind))
}

// workOf returns the work item an event's payload concerns, or "".
func workOf(v events.Payload) string {
	switch pl := v.(type) {
	case *events.ClaimAcquired:
		return pl.Work
	case *events.ClaimRenewed:
		return pl.Work
	case *events.ClaimReleased:
		return pl.Work
	case *events.SessionStarted:
		return pl.Work
	case *events.SessionResumed:
		return pl.Work
	case *events.ContextCompiled:
		return pl.Work
	case *events.CheckpointRecorded:
		return pl.Work
	case *events.SessionEnded:
		return pl.Work
	case *events.ClientBound:
		return pl.Work
	case *events.RestatementChecked:
		return pl.Work
	case *events.EvidenceRecorded:
		return pl.Work
	case *events.WorkVerified:
		return pl.Work
	case *events.ExecutionStarted:
		return pl.Work
	case *events.ExecutionFinished:
		return pl.Work
	case *events.KnowledgeConfirmed:
		return pl.Work
	}
	return ""
}

// WorkEventsAt returns up to limit events of work at rev (of one kind when
// kind is not empty), newest first; a negative limit returns them all.
func WorkEventsAt(conn *sqlite.Conn, work string, kind events.Kind, rev int64, limit int) ([]*events.Event, error) {
	return queryRows(conn, "worklog_events_desc", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":rev", rev)
		if kind == "" {
			st.SetNull(":kind")
		} else {
			st.SetText(":kind", string(kind))
		}
		st.SetInt64(":limit", int64(limit))
	}, always(events.EventFromRow))
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
	err := ScanWorkHistory(conn, work, since, rev, kinds, limit, func(e *events.Event) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// ScanWorkHistory calls fn with each event WorkHistoryAt selects, one at
// a time, at most limit of them (every one for a negative limit).
func ScanWorkHistory(conn *sqlite.Conn, work string, since, rev int64, kinds []string, limit int, fn func(e *events.Event) error) error {
	ks, err := json.Marshal(kinds)
	if err != nil {
		return err
	}
	return query(conn, "work_history", func(st *sqlite.Stmt) {
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
		return fn(events.EventFromRow(st))
	})
}
