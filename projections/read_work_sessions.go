package projections

import "zombiezen.com/go/sqlite"

// FirstActiveSessionOfWorkAt is the first session of work item work to
// have started among those active at rev, with its latest checkpoint and
// context as SessionsAt gives them; nil when none is active. It reads the
// item's sessions through their index, never the project's active ones.
func FirstActiveSessionOfWorkAt(conn *sqlite.Conn, rev int64, work string) (*Session, error) {
	s, err := firstRow(queryRows(conn, "session_active_first_by_work_at", keyAt(":work", work, rev), deref(scanSession)))
	if err != nil || s == nil {
		return nil, err
	}
	return s, enrich(conn, s, rev)
}
