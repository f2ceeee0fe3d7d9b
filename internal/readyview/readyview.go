// Package readyview assembles `awr ready` from one read of the log
// (Read): the ready work items in priority then key order, a page at a
// time with the cursor of the next, each judged executable or not
// (internal/intake), and with all the items not ready and why. The door
// (internal/project) checks the limit and the cursor and resolves the
// revision.
package readyview

import (
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/headmemo"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/workqueue"
	"github.com/awr-dev/awr/projections"
)

// Item is one work item in `awr ready`.
type Item struct {
	Key        string                       `json:"key"`
	Title      string                       `json:"title"`
	Status     string                       `json:"status"`
	Priority   string                       `json:"priority"`
	Goal       string                       `json:"goal"`
	NextAction string                       `json:"next_action"`
	Source     events.SourceRef             `json:"source"`
	Reasons    []projections.NotReadyReason `json:"reasons,omitempty"`
	Holder     *workqueue.Holder            `json:"holder,omitempty"`
	// Executable says whether an agent can start on the item as it is
	// organized: ready to claim, with a declared goal, acceptance criteria
	// and a next action (the judgement of `awr intake inspect`'s
	// executable_work). NotExecutable says why not, besides Reasons.
	Executable    bool         `json:"executable"`
	NotExecutable []intake.Why `json:"not_executable,omitempty"`
}

// Result is `awr ready`.
type Result struct {
	ProjectRevision int64  `json:"project_revision"`
	Ready           []Item `json:"ready"`
	ReadyTotal      int    `json:"ready_total"`
	// ExecutableTotal is how many ready items are executable (all of
	// ReadyTotal with --executable).
	ExecutableTotal int `json:"executable_total"`
	// NotReady lists every other item with its reasons (with --all; absent
	// otherwise).
	NotReady *[]Item `json:"not_ready,omitempty"`
	// NextCursor, when more ready items follow this page, is the
	// --cursor of the next.
	NextCursor string `json:"next_cursor,omitempty"`
}

// item is the ready item of r, judged executable with the goals
// declared.
func item(r projections.Readiness, goals map[string]bool) Item {
	it := Item{Key: r.Item.Key, Title: r.Item.Title, Status: r.Item.Status, Priority: r.Item.Priority, Goal: r.Item.Goal,
		NextAction: r.Item.NextAction, Source: r.Item.Source, Reasons: r.Reasons, NotExecutable: intake.Unexecutable(r.Item, goals)}
	it.Executable = r.Ready && len(it.NotExecutable) == 0
	if it.Source.Path == "" {
		it.Source.Path = r.Item.SourcePath
	}
	if r.Claim != nil {
		it.Holder = workqueue.HolderOf(r.Claim)
	}
	return it
}

// Read is `awr ready` as of rev, the reader's clock at now: the page
// of ready items after the place after (the first page when nil) of at
// most limit items (every one when limit is 0), the executable ones
// only with executable; with all, every other item with the reasons it
// is not ready. At the head and without all it reads the page through
// memo (workqueue.ReadyAtHead): its cost follows the page, the live
// claims and the seats awaiting a person, not the register.
func Read(r *events.Reader, memo *headmemo.Memo, rev, now int64, all, executable bool, after *projections.Place, limit int) (*Result, error) {
	res := &Result{ProjectRevision: rev, Ready: []Item{}}
	if rev == r.Head && !all {
		return res, res.readyAtHead(r, memo, now, executable, after, limit)
	}
	gs, err := projections.GoalsAt(r.Conn, rev)
	if err != nil {
		return nil, err
	}
	goals := intake.GoalKeys(gs)
	rs, err := projections.ReadinessAt(r.Conn, rev, now, rev == r.Head)
	if err != nil {
		return nil, err
	}
	if err := workqueue.HoldBack(r, rev, rs); err != nil {
		return nil, err
	}
	var notReady []Item
	if all {
		notReady = []Item{}
		res.NotReady = &notReady
	}
	var last projections.Place
	for _, x := range rs {
		it := item(x, goals)
		if it.Executable {
			res.ExecutableTotal++
		}
		switch {
		case x.Ready && (it.Executable || !executable):
			res.ReadyTotal++
			place := projections.PlaceOf(x.Item)
			switch {
			case after != nil && place.Compare(*after) <= 0:
			case limit <= 0 || len(res.Ready) < limit:
				res.Ready, last = append(res.Ready, it), place
			case res.NextCursor == "":
				res.NextCursor = cursor.EncodePlace(last)
			}
		case all:
			notReady = append(notReady, it)
			res.NotReady = &notReady
		}
	}
	return res, nil
}

// readyAtHead is the page at the head (workqueue.ReadyAtHead), the
// page and the head's goals kept in memo for the next read of the head
// with the same live claims.
func (res *Result) readyAtHead(r *events.Reader, memo *headmemo.Memo, now int64, executable bool, after *projections.Place, limit int) error {
	f, err := memo.Facts(r)
	if err != nil {
		return err
	}
	goals := intake.GoalKeys(f.Goals)
	live, err := projections.LiveClaimsAt(r.Conn, r.Head, now, true)
	if err != nil {
		return err
	}
	pg, err := memo.Page(r, live, executable, after, limit)
	if err != nil {
		return err
	}
	res.ReadyTotal, res.ExecutableTotal = pg.ReadyTotal, pg.ExecutableTotal
	for _, it := range pg.Items {
		res.Ready = append(res.Ready, item(projections.Readiness{Item: it, Ready: true}, goals))
	}
	if pg.Next != nil {
		res.NextCursor = cursor.EncodePlace(*pg.Next)
	}
	return nil
}
