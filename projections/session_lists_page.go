package projections

import (
	"math"

	"zombiezen.com/go/sqlite"
)

// A session's claims and the conversations bound to it grow with each
// claim re-acquired and each conversation bound: session show and
// recovery inspect read them a page at a time, the page cut in SQL
// after a keyset place, the total counted apart.

// ClaimPlace is a claim's place in the order a session's claims are
// paged: the highest fencing token first, then by id.
type ClaimPlace struct {
	Token int64  `json:"token"`
	ID    string `json:"id"`
}

// PlaceOfClaim is c's place in the paged order.
func PlaceOfClaim(c *Claim) ClaimPlace { return ClaimPlace{Token: c.FencingToken, ID: c.ID} }

// SessionClaimsPageAt lists session's claims at rev after the place
// after (nil: from the first), highest fencing token first, at most
// limit of them (0 or less: every one); more says a page follows (the
// next starts after the page's last). With after nil and no limit it is
// SessionClaimsAt.
func SessionClaimsPageAt(conn *sqlite.Conn, session string, rev int64, after *ClaimPlace, limit int) (page []Claim, more bool, err error) {
	from := ClaimPlace{Token: math.MaxInt64}
	if after != nil {
		from = *after
	}
	rows, err := claimsBy(conn, "claim_page_by_session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetInt64(":rev", rev)
		st.SetInt64(":after_token", from.Token)
		st.SetText(":after_id", from.ID)
		st.SetInt64(":limit", sqlLimitOneMore(limit))
	})
	page, more = cutPage(rows, limit)
	return page, more, err
}

// SessionClaimCountAt counts session's claims at rev.
func SessionClaimCountAt(conn *sqlite.Conn, session string, rev int64) (int, error) {
	n, err := queryInt64(conn, "claim_count_by_session_at", "n", keyAt(":session_id", session, rev))
	return int(n), err
}

// SessionBindingsPageAt lists the bindings pointing at session at rev
// whose external session sorts after after ("": from the first), by
// external session, at most limit of them (0 or less: every one); more
// says a page follows (the next starts after the page's last).
func SessionBindingsPageAt(conn *sqlite.Conn, session string, rev int64, after string, limit int) (page []Binding, more bool, err error) {
	rows, err := bindingsBy(conn, "binding_page_by_session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetInt64(":rev", rev)
		st.SetText(":after", after)
		st.SetInt64(":limit", sqlLimitOneMore(limit))
	})
	page, more = cutPage(rows, limit)
	return page, more, err
}

// SessionBindingCountAt counts the bindings pointing at session at rev.
func SessionBindingCountAt(conn *sqlite.Conn, session string, rev int64) (int, error) {
	n, err := queryInt64(conn, "binding_count_by_session_at", "n", keyAt(":session_id", session, rev))
	return int(n), err
}

// sqlLimitOneMore is what a LIMIT binds to read a page of limit and one
// row more, which says whether a page follows (cutPage): -1, no limit,
// for 0 or less.
func sqlLimitOneMore(limit int) int64 {
	if limit <= 0 {
		return -1
	}
	return int64(limit) + 1
}

// cutPage keeps the first limit of rows read with one more
// (sqlLimitOneMore); more says there was one more.
func cutPage[T any](rows []T, limit int) (page []T, more bool) {
	if limit <= 0 || len(rows) <= limit {
		return rows, false
	}
	return rows[:limit], true
}
