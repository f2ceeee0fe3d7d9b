package projections

import "zombiezen.com/go/sqlite"

// SourceIndexedBefore returns the seq of the last source_indexed event of
// path before seq, or 0 when path was not indexed before it: one seek of
// the (path, valid_from) index, so a diff finds the items an index
// replaced or removed without reading the source's history.
func SourceIndexedBefore(conn *sqlite.Conn, path string, seq int64) (int64, error) {
	return queryInt64(conn, "source_indexed_before", "valid_from", func(st *sqlite.Stmt) {
		st.SetText(":path", path)
		st.SetInt64(":seq", seq)
	})
}
