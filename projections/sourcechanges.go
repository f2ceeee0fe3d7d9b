package projections

import "zombiezen.com/go/sqlite"

// The reads of what one index of a source changed (awr status's last
// reindex): each follows what the index changed, through the indexes on
// valid_from and on (key, source_path, ordinal, valid_from), except
// SourceItemsAt, which reads a whole source's history and is for the
// rare index that replaced a source whole or removed it.

// LastSourceIndexAt returns the seq of the last source_indexed event at
// or before rev that set or ended a source's row (an index, the last part
// of a split one, or a removal), or 0 when none did.
func LastSourceIndexAt(conn *sqlite.Conn, rev int64) (int64, error) {
	var seq int64
	err := query(conn, "source_last_index_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }, func(st *sqlite.Stmt) error {
		seq = st.GetInt64("seq")
		return nil
	})
	return seq, err
}

// SourceHeldAt reports whether source path was indexed (and not removed)
// as of rev, and how many work items it held then.
func SourceHeldAt(conn *sqlite.Conn, path string, rev int64) (items int, ok bool, err error) {
	err = query(conn, "source_row_at", keyAt(":path", path, rev), func(st *sqlite.Stmt) error {
		items, ok = int(st.GetInt64("item_count")), true
		return nil
	})
	return items, ok, err
}

// SourceItem is one declaration of a work item in a source, as the work
// projection stores it: its key, the key's repeat in the source (Ordinal,
// 0 for the first), the seq its version began at and the item's canonical
// JSON (Raw, undecoded: a caller comparing versions compares bytes).
type SourceItem struct {
	Key     string
	Ordinal int
	From    int64
	Raw     string
}

func scanSourceItems(conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt)) ([]SourceItem, error) {
	var out []SourceItem
	err := query(conn, name, bind, func(st *sqlite.Stmt) error {
		out = append(out, SourceItem{Key: st.GetText("key"), Ordinal: int(st.GetInt64("ordinal")), From: st.GetInt64("valid_from"), Raw: st.GetText("item")})
		return nil
	})
	return out, err
}

// ItemsBeganBetween lists the versions of source path's work items that
// began in [from, to] and still held at to, at most limit of them (all
// for a negative limit).
func ItemsBeganBetween(conn *sqlite.Conn, path string, from, to int64, limit int) ([]SourceItem, error) {
	return scanSourceItems(conn, "item_began_between", func(st *sqlite.Stmt) {
		st.SetText(":path", path)
		st.SetInt64(":from", from)
		st.SetInt64(":to", to)
		st.SetInt64(":limit", int64(limit))
	})
}

// ItemBefore returns the canonical JSON of the version of one declaration
// of a work item in source path that held just before seq from ("", false
// when none did).
func ItemBefore(conn *sqlite.Conn, key, path string, ordinal int, from int64) (raw string, ok bool, err error) {
	err = query(conn, "item_before", func(st *sqlite.Stmt) {
		st.SetText(":key", key)
		st.SetText(":path", path)
		st.SetInt64(":ordinal", int64(ordinal))
		st.SetInt64(":from", from)
	}, func(st *sqlite.Stmt) error {
		raw, ok = st.GetText("item"), true
		return nil
	})
	return raw, ok, err
}

// SourceItemsAt lists the work items source path held as of rev, by key
// and ordinal.
func SourceItemsAt(conn *sqlite.Conn, path string, rev int64) ([]SourceItem, error) {
	return scanSourceItems(conn, "item_of_source_at", keyAt(":path", path, rev))
}
