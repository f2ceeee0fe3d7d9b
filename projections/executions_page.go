package projections

import (
	"errors"

	"zombiezen.com/go/sqlite"
)

// ErrUnknownCursor is a page's After that names no execution the log
// ever started.
var ErrUnknownCursor = errors.New("the cursor names no execution of this project")

// ExecutionPage selects one page of executions, oldest started first:
// those of one work item or one session ("" for all), after the
// execution After ("" for the first page), at most Limit of them (0 for
// every one).
type ExecutionPage struct {
	Work, Session string
	After         string
	Limit         int
}

// ExecutionsPageAt gives each execution of the page as of rev to each,
// in order of their start. An After the log never started is
// ErrUnknownCursor.
func ExecutionsPageAt(conn *sqlite.Conn, rev int64, pg ExecutionPage, each func(Execution) error) error {
	var after int64
	if pg.After != "" {
		// An execution's started_seq is an event's, 1 or more: 0 is none.
		seq, err := queryInt64(conn, "execution_started_seq", "started_seq", func(st *sqlite.Stmt) {
			st.SetText(":execution_id", pg.After)
		})
		if err != nil {
			return err
		}
		if seq == 0 {
			return ErrUnknownCursor
		}
		after = seq
	}
	limit := int64(pg.Limit)
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	return query(conn, "execution_page_at", func(st *sqlite.Stmt) {
		st.SetInt64(":rev", rev)
		st.SetText(":work", pg.Work)
		st.SetText(":session_id", pg.Session)
		st.SetInt64(":after_seq", after)
		st.SetInt64(":limit", limit)
	}, func(st *sqlite.Stmt) error {
		x, err := scanExecRow(st).view(st.GetInt64("valid_from"))
		if err != nil {
			return err
		}
		return each(*x)
	})
}

// ExecutionCountAt counts the executions as of rev, of one work item or
// one session ("" for all).
func ExecutionCountAt(conn *sqlite.Conn, rev int64, work, session string) (int, error) {
	n, err := queryInt64(conn, "execution_count_at", "n", func(st *sqlite.Stmt) {
		st.SetInt64(":rev", rev)
		st.SetText(":work", work)
		st.SetText(":session_id", session)
	})
	return int(n), err
}
