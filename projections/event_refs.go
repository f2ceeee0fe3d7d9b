package projections

import (
	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// eventRefs indexes every event under the sessions and work items it
// concerns ("session/<id>", "work/<key>"), beside its own stream, so the log
// can be filtered by session or work item without scanning payloads.
type eventRefs struct{ base }

func newEventRefs() *eventRefs {
	return &eventRefs{base{name: "event_refs", version: 1, schema: "event_refs", tables: []Table{
		{Name: "p_event_refs", Key: []string{"ref", "seq"}},
	}}}
}

// refFields are the payload fields that name a session or work item.
type refFields struct {
	SessionID   string `json:"session_id"`
	FromSession string `json:"from_session"`
	Work        string `json:"work"`
}

func (p *eventRefs) Apply(conn *sqlite.Conn, e *events.Event) error {
	// The event's own stream is indexed by the events table itself.
	refs := [4]string{e.Stream}
	n := 1
	add := func(r string) {
		for _, have := range refs[:n] {
			if have == r {
				return
			}
		}
		refs[n] = r
		n++
	}
	v, err := e.Decoded()
	if err != nil {
		return err
	}
	var f refFields
	switch pl := v.(type) {
	case *events.SessionStarted:
		f = refFields{SessionID: pl.SessionID, FromSession: pl.PredecessorID, Work: pl.Work}
	case *events.SessionResumed:
		f = refFields{SessionID: pl.SessionID, FromSession: pl.FromSession, Work: pl.Work}
	case *events.ContextCompiled:
		f = refFields{SessionID: pl.SessionID, Work: pl.Work}
	case *events.CheckpointRecorded:
		f = refFields{SessionID: pl.SessionID, Work: pl.Work}
	case *events.SessionEnded:
		f = refFields{SessionID: pl.SessionID, Work: pl.Work}
	case *events.ClaimAcquired:
		f = refFields{SessionID: pl.SessionID, FromSession: pl.MovedFrom, Work: pl.Work}
	case *events.ClaimRenewed:
		f = refFields{SessionID: pl.SessionID, Work: pl.Work}
	case *events.ClaimReleased:
		f = refFields{SessionID: pl.SessionID, Work: pl.Work}
	case *events.ClientBound:
		f = refFields{SessionID: pl.SessionID, Work: pl.Work}
	}
	if f.SessionID != "" {
		add("session/" + f.SessionID)
	}
	if f.FromSession != "" {
		add("session/" + f.FromSession)
	}
	if f.Work != "" {
		add("work/" + f.Work)
	}
	for _, r := range refs[1:n] {
		if err := exec(conn, "ref_insert", func(st *sqlite.Stmt) {
			st.SetText(":ref", r)
			st.SetInt64(":seq", e.Seq)
		}); err != nil {
			return err
		}
	}
	return nil
}
