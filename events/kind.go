package events

import "zombiezen.com/go/sqlite"

// StreamsBetween calls fn with the stream of each event from..to
// (inclusive, by seq) whose stream starts with prefix, reading no payload;
// fn returns false to stop. A stream is passed once per event.
func StreamsBetween(conn *sqlite.Conn, from, to int64, prefix string, fn func(stream string) bool) error {
	st := prep(conn, "streams_between")
	st.SetInt64(":from", from)
	st.SetInt64(":to", to)
	st.SetText(":prefix", prefix)
	st.SetText(":prefix_end", prefix+"\xff")
	defer st.Reset()
	for {
		row, err := st.Step()
		if err != nil {
			return mapErr("scan streams", err)
		}
		if !row || !fn(st.GetText("stream")) {
			return nil
		}
	}
}
