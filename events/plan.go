package events

import (
	"zombiezen.com/go/sqlite"
)

// QueryPlan returns the detail lines of SQLite's EXPLAIN QUERY PLAN for
// query on conn (its parameters left unbound), such as "SEARCH events
// USING INDEX events_stream_kind (stream=? AND kind=?)". Tests use it to
// pin that a read seeks an index rather than scanning a table that grows
// with the history. Errors: the query does not prepare.
func QueryPlan(conn *sqlite.Conn, query string) ([]string, error) {
	st, _, err := conn.PrepareTransient("EXPLAIN QUERY PLAN " + query)
	if err != nil {
		return nil, err
	}
	defer st.Finalize()
	var out []string
	for {
		row, err := st.Step()
		if err != nil || !row {
			return out, err
		}
		out = append(out, st.ColumnText(3))
	}
}

// Statement returns the text of the embedded statement name (a file of
// events/sql without its extension), for QueryPlan; "" when there is none.
func Statement(name string) string { q, _ := statements.Get(name); return q }
