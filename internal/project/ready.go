package project

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/readyview"
)

// ReadyResult is `awr ready` (internal/readyview assembles it).
type ReadyResult = readyview.Result

// ReadyItem is one work item in `awr ready`.
type ReadyItem = readyview.Item

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

// pageLimit is a listing's page size: --limit n checked
// (commands.LimitOf), commands.DefaultPage when n is nil, or 0 (every
// item) with all and no n.
func pageLimit(op string, n *int, all bool) (int, error) {
	def := commands.DefaultPage
	if all {
		def = 0
	}
	return commands.LimitOf(op, "--limit", n, def)
}

// idPage is a listing by id's page: its size (pageLimit) and the id after
// which it starts (cursor.DecodeID of cur; "" for the first page).
func idPage(op string, n *int, all bool, cur string) (limit int, after string, err error) {
	if limit, err = pageLimit(op, n, all); err != nil {
		return 0, "", err
	}
	after, err = cursor.DecodeID(op, cur, "awr "+op)
	return limit, after, err
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
	limit, err := pageLimit("ready", req.Limit, req.All)
	if err != nil {
		return nil, err
	}
	after, err := cursor.DecodePlace("ready", req.Cursor, "awr ready")
	if err != nil {
		return nil, err
	}
	return readResult(ctx, p, req.Read, func(r *events.Reader, rev, now int64) (*ReadyResult, error) {
		return readyview.Read(r, &p.memo, rev, now, req.All, req.Executable, after, limit)
	})
}
