package projections

import (
	"cmp"
	"math"
	"strings"

	"zombiezen.com/go/sqlite"
)

// SessionPlace is a session's place in the order sessions are listed:
// the order they started in (the seq of their session_started; the log's
// time never runs backwards, so it is also SessionsAt's order of
// started_at), the cursor of a page of sessions.
type SessionPlace struct {
	StartRevision int64
	ID            string
}

// PlaceOfSession is s's place in the order sessions are listed.
func PlaceOfSession(s *Session) SessionPlace {
	return SessionPlace{StartRevision: s.StartRevision, ID: s.ID}
}

// Compare orders two places as sessions are listed, oldest first.
func (p SessionPlace) Compare(o SessionPlace) int {
	return cmp.Or(cmp.Compare(p.StartRevision, o.StartRevision), strings.Compare(p.ID, o.ID))
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
// the order they started (or its reverse), each with its latest
// checkpoint and context as SessionsAt gives them. Each session's first
// version is found by an index (of valid_from, or of work and
// start_revision), so a page reads its own sessions, not those before
// it; it holds one page at a time (none with Limit 0: then fn has each
// session as it is read). fn's error ends the read and is returned.
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
		return query(conn, name, bindPage(rev, pg, limit), func(st *sqlite.Stmt) error {
			s := scanSession(st)
			if err := enrich(conn, s, rev); err != nil {
				return err
			}
			return fn(*s)
		})
	}
	// A page's rows are read first and enriched after (enriching reads
	// other tables): at most Limit of them.
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
		switch {
		case pg.Newest && pg.After == nil:
			st.SetInt64(":before", math.MaxInt64)
		case pg.Newest:
			st.SetInt64(":before", pg.After.StartRevision)
		case pg.After == nil:
			st.SetInt64(":after", 0)
		default:
			st.SetInt64(":after", pg.After.StartRevision)
		}
		st.SetInt64(":limit", limit)
	}
}

// SessionCountAt counts the sessions as of rev (of work item work when
// not empty): for one work item one seek (the ordinal of its latest
// session started by rev), for all of them a count of the read model's
// rows at rev.
func SessionCountAt(conn *sqlite.Conn, rev int64, work string) (int, error) {
	if work != "" {
		n, err := sessionOrdinal(conn, "session_started_by_work", ":until", work, rev)
		return int(n), err
	}
	n := 0
	err := query(conn, "session_count_at", func(st *sqlite.Stmt) {
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		n = int(st.GetInt64("n"))
		return nil
	})
	return n, err
}
