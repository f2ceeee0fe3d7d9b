package events

import (
	"strings"

	"zombiezen.com/go/sqlite"
)

// StreamsBetween calls fn with the stream of each event from..to
// (inclusive, by seq) whose stream starts with prefix, copying no payload;
// fn returns false to stop. A stream is passed once per event. It reads
// the range of the log's rowid, whatever the prefix.
func StreamsBetween(conn *sqlite.Conn, from, to int64, prefix string, fn func(stream string) bool) error {
	st := prep(conn, "streams_between")
	st.SetInt64(":from", from)
	st.SetInt64(":to", to)
	return mapErr("scan streams", eachRow(st, func() bool {
		s := st.GetText("stream")
		return !strings.HasPrefix(s, prefix) || fn(s)
	}))
}
