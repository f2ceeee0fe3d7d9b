package recovery

import (
	"errors"
	"fmt"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// The two lists of a report (the events changed since the checkpoint,
// the items closed since it) are paged as `awr log` is: a page from a
// cursor (the seq it starts after), the count of what follows it and the
// cursor of the next page; Each streams them whole. The items in force
// are paged as a listing read is: a page after a place, their total and
// the cursor of the next page; with Each's negative limit, every one.

// lists sets the report's pages of its three lists at rev, from the
// cursors of page, and their counts and next cursors; with a negative
// page.Limit only the cursors (the changed and closed lists are left
// empty for Each) and every item in force.
func (rep *Report) lists(conn *sqlite.Conn, rev, head int64, page Page) error {
	changed, closed, err := rep.cursors(rev, head, page)
	if err != nil {
		return err
	}
	rep.ChangedSinceSeq = changed
	limit := page.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	if rep.Knowledge != nil {
		k, total, last := rep.Knowledge.InForcePage(page.KnowledgeAfter, limit)
		k.Since, k.Closed, k.ClosedMore = closed, []projections.Knowledge{}, 0
		rep.Knowledge, rep.KnowledgeTotal = k, total
		if last != nil {
			rep.KnowledgeNextCursor = cursor.EncodeKnowledge(*last)
		}
	}
	if limit < 0 {
		return nil
	}
	work := rep.Session.Work
	if rep.ChangedSince, rep.ChangedMore, rep.ChangedNextSince, err = changedPage(conn, work, changed, rev, limit); err != nil {
		return err
	}
	if rep.Knowledge != nil {
		k := rep.Knowledge
		if k.Closed, k.ClosedMore, rep.ClosedNextSince, err = closedPage(conn, work, rep.closedBase(), closed, rev, limit); err != nil {
			return err
		}
	}
	return nil
}

// closedBase is the seq after which the report's work lists items as
// closed since the checkpoint: the one before the checkpoint's, which
// may close items itself (-1 without a checkpoint).
func (rep *Report) closedBase() int64 {
	if rep.Checkpoint == nil {
		return -1
	}
	return rep.Checkpoint.Seq - 1
}

// cursors checks page's cursors against the report read at rev and
// returns the seqs its lists start after: the changed events' (the
// checkpoint's seq by default, 0 without one) and the closed items'
// (closedBase by default).
// Errors: InvalidInput for a cursor before its list's start or beyond
// rev, or a closed items' cursor for a session without a checkpoint.
func (rep *Report) cursors(rev, head int64, page Page) (changed, closed int64, err error) {
	id, past := rep.Session.ID, rev != head
	changed, closed = 0, rep.closedBase()
	if rep.Checkpoint != nil {
		changed = rep.Checkpoint.Seq
	}
	// firstPage gives e the command of the first page of flag's list.
	firstPage := func(e *fault.Error, flag string, start int64) error {
		e = e.With("flag", flag).With("min", start).With("max", rev)
		switch {
		case flag == "--changed-since" && past:
			return e.WithHint("awr recovery inspect --session %s --at %d --changed-since %d", id, rev, start)
		case flag == "--changed-since":
			return e.WithHint("awr recovery inspect --session %s --changed-since %d", id, start)
		case past:
			return e.WithHint("awr recovery inspect --session %s --at %d --closed-since %d", id, rev, start)
		default:
			return e.WithHint("awr recovery inspect --session %s --closed-since %d", id, start)
		}
	}
	check := func(flag string, cursor *int64, start int64, what string) (int64, error) {
		if cursor == nil {
			return start, nil
		}
		switch c := *cursor; {
		case c < start:
			return 0, firstPage(fault.New(fault.InvalidInput, "recovery inspect: %s %d is before the list's start: %s", flag, c, what), flag, start)
		case c > rev:
			return 0, firstPage(fault.New(fault.InvalidInput, "recovery inspect: %s %d is beyond the revision read (%d)", flag, c, rev), flag, start)
		default:
			return c, nil
		}
	}
	what := fmt.Sprintf("the events on %s after seq %d", rep.Session.Work, changed)
	if rep.Checkpoint != nil {
		what += ", the checkpoint's"
	}
	if changed, err = check("--changed-since", page.ChangedAfter, changed, what); err != nil {
		return 0, 0, err
	}
	if page.ClosedAfter != nil && rep.Knowledge == nil {
		e := fault.New(fault.InvalidInput, "recovery inspect: --closed-since %d: session %s has no checkpoint, so nothing is listed as closed since one", *page.ClosedAfter, id).
			With("flag", "--closed-since")
		if past {
			return 0, 0, e.WithHint("awr recovery inspect --session %s --at %d", id, rev)
		}
		return 0, 0, e.WithHint("awr recovery inspect --session %s", id)
	}
	what = fmt.Sprintf("the items of %s closed after seq %d, from the checkpoint's on", rep.Session.Work, closed)
	if closed, err = check("--closed-since", page.ClosedAfter, closed, what); err != nil {
		return 0, 0, err
	}
	return changed, closed, nil
}

// changedPage reads the first limit events on work after seq after, up to
// rev, sources' own events left out; more counts those after them and
// next is the seq the next page starts after (0 when none follow).
func changedPage(conn *sqlite.Conn, work string, after, rev int64, limit int) (page []events.Envelope, more int, next int64, err error) {
	page = []events.Envelope{}
	full := false
	err = projections.ScanLog(conn, projections.LogFilter{Work: work, Since: after, NoSources: true}, rev, limit, func(e *events.Event) error {
		if len(page) == limit {
			full = true
			return errFull
		}
		page = append(page, e.ToEnvelope())
		return nil
	})
	return pageEnd(page, full, err, func(e events.Envelope) int64 { return e.Seq }, func(next int64) (int, error) {
		return projections.CountWorkEventsAfter(conn, work, next, rev)
	})
}

// closedPage reads the items of work closed after since, in the order
// they closed, from those closed after seq after: whole checkpoints, up
// to limit items (more, if the first checkpoint closed more); more
// counts the items after them and next is the seq the next page starts
// after (0 when none follow).
func closedPage(conn *sqlite.Conn, work string, since, after, rev int64, limit int) (page []projections.Knowledge, more int, next int64, err error) {
	page = []projections.Knowledge{}
	full := false
	err = projections.ScanClosedAfter(conn, work, since, after, rev, func(group []projections.Knowledge) error {
		if len(page) > 0 && len(page)+len(group) > limit {
			full = true
			return errFull
		}
		page = append(page, group...)
		return nil
	})
	return pageEnd(page, full, err, func(k projections.Knowledge) int64 { return k.Revision }, func(next int64) (int, error) {
		return projections.CountClosedAfter(conn, work, since, next, rev)
	})
}

// pageEnd finishes a page a scan read: the scan's error (errFull, which
// stopped a full page, aside); on a full page, next is the cursor of its
// last entry and more what count counts after it.
func pageEnd[T any](page []T, full bool, err error, cursor func(T) int64, count func(next int64) (int, error)) ([]T, int, int64, error) {
	if err != nil && err != errFull {
		return nil, 0, 0, err
	}
	if !full {
		return page, 0, 0, nil
	}
	next := cursor(page[len(page)-1])
	more, err := count(next)
	return page, more, next, err
}

// errFull stops a scan that has what it lists.
var errFull = errors.New("full")

// Each streams the whole of rep's two lists from its cursors, read at
// rep.ProjectRevision on conn (rep as At returned it with a negative
// Page.Limit): changed with every event on the work after
// rep.ChangedSinceSeq, oldest first, then closed with every item closed
// after knowledge.closed_since_seq, in the order they closed (closed is
// not called without a checkpoint). Memory stays bounded: one event, or
// one checkpoint's closes, at a time.
// Errors: those of the reads, and those changed or closed return.
func Each(conn *sqlite.Conn, rep *Report, changed func(*events.Event) error, closed func(*projections.Knowledge) error) error {
	rev, work := rep.ProjectRevision, rep.Session.Work
	if err := projections.ScanLog(conn, projections.LogFilter{Work: work, Since: rep.ChangedSinceSeq, NoSources: true}, rev, -1, changed); err != nil {
		return err
	}
	if rep.Knowledge == nil {
		return nil
	}
	return projections.ScanClosedAfter(conn, work, rep.closedBase(), rep.Knowledge.Since, rev, func(group []projections.Knowledge) error {
		for i := range group {
			if err := closed(&group[i]); err != nil {
				return err
			}
		}
		return nil
	})
}
