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
// limit of them (0 or less: every one). With after nil and no limit it
// is SessionClaimsAt.
func SessionClaimsPageAt(conn *sqlite.Conn, session string, rev int64, after *ClaimPlace, limit int) ([]Claim, error) {
	from := ClaimPlace{Token: math.MaxInt64}
	if after != nil {
		from = *after
	}
	return claimsBy(conn, "claim_page_by_session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetInt64(":rev", rev)
		st.SetInt64(":after_token", from.Token)
		st.SetText(":after_id", from.ID)
		st.SetInt64(":limit", sqlLimit(limit))
	})
}

// SessionClaimCountAt counts session's claims at rev.
func SessionClaimCountAt(conn *sqlite.Conn, session string, rev int64) (int, error) {
	n, err := queryInt64(conn, "claim_count_by_session_at", "n", keyAt(":session_id", session, rev))
	return int(n), err
}

// SessionBindingsPageAt lists the bindings pointing at session at rev
// whose external session sorts after after ("": from the first), by
// external session, at most limit of them (0 or less: every one).
func SessionBindingsPageAt(conn *sqlite.Conn, session string, rev int64, after string, limit int) ([]Binding, error) {
	return bindingsBy(conn, "binding_page_by_session_at", func(st *sqlite.Stmt) {
		st.SetText(":session_id", session)
		st.SetInt64(":rev", rev)
		st.SetText(":after", after)
		st.SetInt64(":limit", sqlLimit(limit))
	})
}

// SessionBindingCountAt counts the bindings pointing at session at rev.
func SessionBindingCountAt(conn *sqlite.Conn, session string, rev int64) (int, error) {
	n, err := queryInt64(conn, "binding_count_by_session_at", "n", keyAt(":session_id", session, rev))
	return int(n), err
}

// sqlLimit is a page size as a LIMIT binds it: -1, no limit, for 0 or
// less.
func sqlLimit(limit int) int64 {
	if limit <= 0 {
		return -1
	}
	return int64(limit)
}
