package projections

import (
	"slices"

	"zombiezen.com/go/sqlite"
)

// The paged reads of what closed on a work item since a checkpoint, and
// of what happened on it since (`awr recovery inspect`): a page, a count
// of what follows it, and the seq a next page starts after, each read
// costing what it returns (an index range from the cursor), never the
// whole list.

// ScanClosedAfter streams, in the order they closed, the items of work
// closed after since and up to rev whose closing version came after seq
// after (after ≥ since: the cursor of a page; since itself for the
// first), as of rev: fn gets the items of one seq at a time (one
// checkpoint may close several), by kind and number, with Sessions
// counted. Nothing before after is read, so a page costs what it lists.
// fn returning an error stops the scan with that error.
func ScanClosedAfter(conn *sqlite.Conn, work string, since, after, rev int64, fn func(group []Knowledge) error) error {
	var group []Knowledge
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		slices.SortFunc(group, byKindNum)
		if err := countSessions(conn, work, rev, group); err != nil {
			return err
		}
		err := fn(group)
		group = nil
		return err
	}
	err := query(conn, "knowledge_closed_after", bindClosedAfter(work, since, after, rev), func(st *sqlite.Stmt) error {
		k := scanKnowledge(st)
		if len(group) > 0 && group[0].Revision != k.Revision {
			if err := flush(); err != nil {
				return err
			}
		}
		group = append(group, *k)
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// CountClosedAfter counts the items ScanClosedAfter lists with the same
// arguments, reading the same index range without decoding the items.
func CountClosedAfter(conn *sqlite.Conn, work string, since, after, rev int64) (int, error) {
	n, err := queryInt64(conn, "knowledge_closed_after_count", "n", bindClosedAfter(work, since, after, rev))
	return int(n), err
}

// bindClosedAfter binds the range ScanClosedAfter and CountClosedAfter
// read.
func bindClosedAfter(work string, since, after, rev int64) func(st *sqlite.Stmt) {
	return func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":since", since)
		st.SetInt64(":after", max(since, after))
		st.SetInt64(":rev", rev)
	}
}

// CountWorkEventsAfter counts the events on work after seq after and up
// to rev that ScanLog lists for LogFilter{Work: work, NoSources: true}:
// one range of the work log's key, no event read.
func CountWorkEventsAfter(conn *sqlite.Conn, work string, after, rev int64) (int, error) {
	n, err := queryInt64(conn, "work_log_count", "n", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":after", after)
		st.SetInt64(":rev", rev)
	})
	return int(n), err
}
