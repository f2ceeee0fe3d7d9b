package projections

import (
	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// LogFilter selects events for `awr log`. Since is exclusive (events after
// it), Until inclusive; zero values mean unbounded. Limit 0 means the
// default (the door's DefaultLogLimit); a negative Limit means no limit.
type LogFilter struct {
	Session string
	Work    string
	Kind    string
	Since   int64
	Until   int64
	Limit   int
	// NoSources leaves out of a Work filter the source_indexed events
	// that changed the item (recovery reports register changes apart).
	NoSources bool
}

// ScanLog streams the events up to until that f selects, in seq order,
// at most limit+1 of them (all for a negative limit; the caller stops fn
// one past its page to learn that more follow). An event concerns a session
// when it is on the session's stream, or is a claim or binding event of
// that session; it concerns a work item when it is on the work item's
// stream, on the stream of a session working on it, binds a host to it, or
// is a source_indexed event that changed it (began or ended one of its
// versions).
func ScanLog(conn *sqlite.Conn, f LogFilter, until int64, limit int, fn func(e *events.Event) error) error {
	name := "log_range"
	switch {
	case f.Session != "":
		name = "log_by_session"
	case f.Work != "" && f.NoSources:
		name = "log_by_work_events"
	case f.Work != "":
		name = "log_by_work"
	}
	st := prep(conn, name)
	st.SetInt64(":since", f.Since)
	st.SetInt64(":until", until)
	if f.Kind == "" {
		st.SetNull(":kind")
	} else {
		st.SetText(":kind", f.Kind)
	}
	if f.Session != "" {
		st.SetText(":session", f.Session)
		if f.Work == "" {
			st.SetNull(":work")
		}
	}
	if f.Work != "" {
		st.SetText(":work", f.Work)
	}
	fetch := int64(limit) + 1
	if limit < 0 {
		fetch = -1
	}
	st.SetInt64(":limit", fetch)
	return events.StepEvents(st, fn)
}
