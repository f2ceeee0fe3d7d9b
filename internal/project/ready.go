package project

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/headmemo"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/workqueue"
	"github.com/awr-dev/awr/projections"
)

// ReadyItem is one work item in `awr ready`.
type ReadyItem struct {
	Key        string                       `json:"key"`
	Title      string                       `json:"title"`
	Status     string                       `json:"status"`
	Priority   string                       `json:"priority"`
	Goal       string                       `json:"goal"`
	NextAction string                       `json:"next_action"`
	Source     events.SourceRef             `json:"source"`
	Reasons    []projections.NotReadyReason `json:"reasons,omitempty"`
	Holder     *Holder                      `json:"holder,omitempty"`
	// Executable says whether an agent can start on the item as it is
	// organized: ready to claim, with a declared goal, acceptance criteria
	// and a next action (the judgement of `awr intake inspect`'s
	// executable_work). NotExecutable says why not, besides Reasons.
	Executable    bool         `json:"executable"`
	NotExecutable []intake.Why `json:"not_executable,omitempty"`
}

// ReadyResult is `awr ready`.
type ReadyResult struct {
	ProjectRevision int64       `json:"project_revision"`
	Ready           []ReadyItem `json:"ready"`
	ReadyTotal      int         `json:"ready_total"`
	// ExecutableTotal is how many ready items are executable (all of
	// ReadyTotal with --executable).
	ExecutableTotal int `json:"executable_total"`
	// NotReady lists every other item with its reasons (with --all; absent
	// otherwise).
	NotReady *[]ReadyItem `json:"not_ready,omitempty"`
	// NextCursor, when more ready items follow this page, is the
	// --cursor of the next.
	NextCursor string `json:"next_cursor,omitempty"`
}

func readyItem(r projections.Readiness, goals map[string]bool) ReadyItem {
	it := ReadyItem{Key: r.Item.Key, Title: r.Item.Title, Status: r.Item.Status, Priority: r.Item.Priority, Goal: r.Item.Goal,
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

// ReadyRequest is `awr ready` and awr_ready.
type ReadyRequest struct {
	Read
	All        bool   `name:"all" json:"all,omitempty" help:"Everything: every ready item (no page), and every other item with the reasons it is not ready."`
	Executable bool   `name:"executable" json:"executable,omitempty" help:"Only the ready items an agent can start on as organized (a declared goal, acceptance criteria, a next action)."`
	Limit      *int   `name:"limit" json:"limit,omitempty" help:"At most N ready items (1 to 200; default 50, or all with --all)." placeholder:"N"`
	Cursor     string `name:"cursor" json:"cursor,omitempty" help:"The page after this one: the next_cursor of the page before." placeholder:"CURSOR"`
}

// LimitOf is commands.LimitOf for the front ends: the one check of a
// page-size flag (1 to commands.MaxLimit; def when n is nil).
func LimitOf(op, flag string, n *int, def int) (int, error) {
	return commands.LimitOf(op, flag, n, def)
}

// Ready lists claimable work as of the request's revision, sorted by
// priority then key: status planned or ready, no blocker, every required
// dependency completed, no cycle, no live claim, and no seat on it
// awaiting a person. Each item says whether it is executable and, if
// not, why. It lists one page (Limit, commands.DefaultPage when nil; 0
// is refused, over MCP as on the command line: it never means all) from
// the Cursor on, counts every ready item (ReadyTotal) and gives the
// cursor of the next page; All lists every ready item (a Limit still
// bounds them) and adds every other item with the reasons it is not
// ready; Executable keeps only the executable items (the others go to
// NotReady with All). At the head a page reads the work queues the
// projections keep (projections.QueuePage): its cost follows the page,
// the live claims and the seats awaiting a person, not the register.
// Errors: InvalidInput for a limit below 1 or above commands.MaxLimit
// (details.flag --limit), or a cursor awr did not give (details.flag
// --cursor); those of the read.
func (p *Project) Ready(ctx context.Context, req ReadyRequest) (*ReadyResult, error) {
	def := commands.DefaultPage
	if req.All {
		def = 0
	}
	limit, err := commands.LimitOf("ready", "--limit", req.Limit, def)
	if err != nil {
		return nil, err
	}
	after, err := cursor.DecodePlace("ready", req.Cursor, "awr ready")
	if err != nil {
		return nil, err
	}
	res := &ReadyResult{Ready: []ReadyItem{}}
	err = p.read(ctx, req.Read, func(r *events.Reader, rev, now int64) error {
		res.ProjectRevision = rev
		if rev == r.Head && !req.All {
			return res.readyAtHead(r, &p.memo, now, req.Executable, after, limit)
		}
		gs, err := projections.GoalsAt(r.Conn, rev)
		if err != nil {
			return err
		}
		goals := intake.GoalKeys(gs)
		rs, err := projections.ReadinessAt(r.Conn, rev, now, rev == r.Head)
		if err != nil {
			return err
		}
		if err := workqueue.HoldBack(r, rev, rs); err != nil {
			return err
		}
		var notReady []ReadyItem
		if req.All {
			notReady = []ReadyItem{}
			res.NotReady = &notReady
		}
		var last projections.Place
		for _, x := range rs {
			it := readyItem(x, goals)
			if it.Executable {
				res.ExecutableTotal++
			}
			switch {
			case x.Ready && (it.Executable || !req.Executable):
				res.ReadyTotal++
				place := projections.PlaceOf(x.Item)
				switch {
				case after != nil && place.Compare(*after) <= 0:
				case limit <= 0 || len(res.Ready) < limit:
					res.Ready, last = append(res.Ready, it), place
				case res.NextCursor == "":
					res.NextCursor = cursor.EncodePlace(last)
				}
			case req.All:
				notReady = append(notReady, it)
				res.NotReady = &notReady
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// readyAtHead is Ready's page at the head (workqueue.ReadyAtHead), the
// page and the head's goals kept in memo for the next read of the head
// with the same live claims.
func (res *ReadyResult) readyAtHead(r *events.Reader, memo *headmemo.Memo, now int64, executable bool, after *projections.Place, limit int) error {
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
		res.Ready = append(res.Ready, readyItem(projections.Readiness{Item: it, Ready: true}, goals))
	}
	if pg.Next != nil {
		res.NextCursor = cursor.EncodePlace(*pg.Next)
	}
	return nil
}
