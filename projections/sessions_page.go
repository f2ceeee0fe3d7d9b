package projections

import (
	"cmp"
	"strings"

	"zombiezen.com/go/sqlite"
)

// SessionPlace is a session's place in the order sessions are listed
// (SessionsAt's: started_at, then start_revision, then id): the cursor
// of a page of sessions.
type SessionPlace struct {
	StartedAt     int64
	StartRevision int64
	ID            string
}

// PlaceOfSession is s's place in the order sessions are listed.
func PlaceOfSession(s *Session) SessionPlace {
	return SessionPlace{StartedAt: s.StartedAt, StartRevision: s.StartRevision, ID: s.ID}
}

// Compare orders two places as sessions are listed, oldest first.
func (p SessionPlace) Compare(o SessionPlace) int {
	return cmp.Or(cmp.Compare(p.StartedAt, o.StartedAt), cmp.Compare(p.StartRevision, o.StartRevision), strings.Compare(p.ID, o.ID))
}

// SessionPage selects a page of sessions for SessionsPageAt.
type SessionPage struct {
	// Work keeps the sessions of this work item ("" keeps all).
	Work string
	// After is the place the page starts after (nil: at the first).
	After *SessionPlace
	// Newest reverses the order: newest first, the page starting
	// before After.
	Newest bool
	// Limit is the most sessions of the page (0: every one).
	Limit int
}

// SessionsPageAt calls fn with each session of one page as of rev, in
// SessionsAt's order (or its reverse), each with its latest checkpoint
// and context as SessionsAt gives them. It holds one session at a time,
// and SQLite's sorter at most Limit rows: its memory does not follow
// the number of sessions. fn's error ends the read and is returned.
func SessionsPageAt(conn *sqlite.Conn, rev int64, pg SessionPage, fn func(Session) error) error {
	name := "session_page_at"
	if pg.Work != "" {
		name = "session_page_by_work_at"
	}
	if pg.Newest {
		name = strings.TrimSuffix(name, "_at") + "_desc_at"
	}
	limit := int64(pg.Limit)
	if limit <= 0 {
		limit = -1
	}
	// The page's rows are read first and enriched after: enriching reads
	// other tables, and the page is at most Limit rows (or, for every
	// session, read one at a time below).
	if limit < 0 {
		return query(conn, name, bindPage(rev, pg, limit), func(st *sqlite.Stmt) error {
			s := scanSession(st)
			if err := enrich(conn, s, rev); err != nil {
				return err
			}
			return fn(*s)
		})
	}
	var page []Session
	if err := query(conn, name, bindPage(rev, pg, limit), func(st *sqlite.Stmt) error {
		page = append(page, *scanSession(st))
		return nil
	}); err != nil {
		return err
	}
	for i := range page {
		if err := enrich(conn, &page[i], rev); err != nil {
			return err
		}
		if err := fn(page[i]); err != nil {
			return err
		}
	}
	return nil
}

func bindPage(rev int64, pg SessionPage, limit int64) func(st *sqlite.Stmt) {
	return func(st *sqlite.Stmt) {
		st.SetInt64(":rev", rev)
		if pg.Work != "" {
			st.SetText(":work", pg.Work)
		}
		st.SetBool(":first", pg.After == nil)
		var at SessionPlace
		if pg.After != nil {
			at = *pg.After
		}
		st.SetInt64(":started_at", at.StartedAt)
		st.SetInt64(":start_revision", at.StartRevision)
		st.SetText(":session_id", at.ID)
		st.SetInt64(":limit", limit)
	}
}

// SessionCountAt counts the sessions as of rev (of work item work when
// not empty) without reading them.
func SessionCountAt(conn *sqlite.Conn, rev int64, work string) (int, error) {
	name := "session_count_at"
	if work != "" {
		name = "session_count_by_work_at"
	}
	n := 0
	err := query(conn, name, func(st *sqlite.Stmt) {
		st.SetInt64(":rev", rev)
		if work != "" {
			st.SetText(":work", work)
		}
	}, func(st *sqlite.Stmt) error {
		n = int(st.GetInt64("n"))
		return nil
	})
	return n, err
}
