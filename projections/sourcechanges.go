package projections

import (
	"encoding/json"

	"zombiezen.com/go/sqlite"
)

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
	err = query(conn, "source_row_at", func(st *sqlite.Stmt) {
		st.SetText(":path", path)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		items, ok = int(st.GetInt64("item_count")), true
		return nil
	})
	return items, ok, err
}

// SourceItem is one declaration of a work item in a source: its key's
// repeat in the source (Ordinal, 0 for the first) and the seq its version
// began at.
type SourceItem struct {
	WorkItem
	Ordinal int
	From    int64
}

func scanSourceItems(conn *sqlite.Conn, name, path string, bind func(st *sqlite.Stmt)) ([]SourceItem, error) {
	var out []SourceItem
	err := query(conn, name, bind, func(st *sqlite.Stmt) error {
		var it SourceItem
		if err := json.Unmarshal([]byte(st.GetText("item")), &it.WorkItem.WorkItem); err != nil {
			return err
		}
		it.SourcePath, it.Ordinal, it.From = path, int(st.GetInt64("ordinal")), st.GetInt64("valid_from")
		out = append(out, it)
		return nil
	})
	return out, err
}

// ItemsBeganBetween lists the versions of source path's work items that
// began in [from, to] and still held at to, at most limit of them.
func ItemsBeganBetween(conn *sqlite.Conn, path string, from, to int64, limit int) ([]SourceItem, error) {
	return scanSourceItems(conn, "item_began_between", path, func(st *sqlite.Stmt) {
		st.SetText(":path", path)
		st.SetInt64(":from", from)
		st.SetInt64(":to", to)
		st.SetInt64(":limit", int64(limit))
	})
}

// ItemBefore returns the version of one declaration of a work item in
// source path that held just before seq from (nil when none did).
func ItemBefore(conn *sqlite.Conn, key, path string, ordinal int, from int64) (*WorkItem, error) {
	var out *WorkItem
	err := query(conn, "item_before", func(st *sqlite.Stmt) {
		st.SetText(":key", key)
		st.SetText(":path", path)
		st.SetInt64(":ordinal", int64(ordinal))
		st.SetInt64(":from", from)
	}, func(st *sqlite.Stmt) error {
		it := &WorkItem{SourcePath: path}
		if err := json.Unmarshal([]byte(st.GetText("item")), &it.WorkItem); err != nil {
			return err
		}
		out = it
		return nil
	})
	return out, err
}

// SourceItemsAt lists the work items source path held as of rev, by key
// and ordinal.
func SourceItemsAt(conn *sqlite.Conn, path string, rev int64) ([]SourceItem, error) {
	return scanSourceItems(conn, "item_of_source_at", path, func(st *sqlite.Stmt) {
		st.SetText(":path", path)
		st.SetInt64(":rev", rev)
	})
}
