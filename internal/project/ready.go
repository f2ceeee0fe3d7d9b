package project

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake"
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

// Holder is the session holding a live claim on an item.
type Holder struct {
	SessionID    string `json:"session_id"`
	Agent        string `json:"agent"`
	ExpiresAt    int64  `json:"expires_at,omitempty"`
	FencingToken int64  `json:"fencing_token"`
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
}

func readyItem(r projections.Readiness, goals map[string]bool) ReadyItem {
	it := ReadyItem{Key: r.Item.Key, Title: r.Item.Title, Status: r.Item.Status, Priority: r.Item.Priority, Goal: r.Item.Goal,
		NextAction: r.Item.NextAction, Source: r.Item.Source, Reasons: r.Reasons, NotExecutable: intake.Unexecutable(r.Item, goals)}
	it.Executable = r.Ready && len(it.NotExecutable) == 0
	if it.Source.Path == "" {
		it.Source.Path = r.Item.SourcePath
	}
	if r.Claim != nil {
		it.Holder = &Holder{SessionID: r.Claim.SessionID, Agent: r.Claim.Agent, ExpiresAt: r.Claim.ExpiresAt, FencingToken: r.Claim.FencingToken}
	}
	return it
}

// ReadyRequest is `awr ready` and awr_ready.
type ReadyRequest struct {
	Read
	All        bool `name:"all" json:"all,omitempty" help:"Also list every other item with the reasons it is not ready."`
	Executable bool `name:"executable" json:"executable,omitempty" help:"Only the ready items an agent can start on as organized (a declared goal, acceptance criteria, a next action)."`
	Limit      *int `name:"limit" json:"limit,omitempty" help:"At most N ready items (1 to 200; default all)." placeholder:"N"`
}

// LimitOf is commands.LimitOf for the front ends: the one check of a
// page-size flag (1 to commands.MaxLimit; def when n is nil).
func LimitOf(op, flag string, n *int, def int) (int, error) {
	return commands.LimitOf(op, flag, n, def)
}

// Ready lists claimable work as of the request's revision, sorted by
// priority then key: status planned or ready, no blocker, every required
// dependency completed, no cycle, no live claim, and no seat on it
// awaiting a person. Each item says whether
// it is executable and, if not, why. Limit nil (left out) lists all, else
// it is 1 to commands.MaxLimit (0 is refused, over MCP as on the command
// line: it never means all); Executable keeps
// only the executable items (the others go to NotReady with all); All
// adds every other item with the reasons it is not ready.
// Errors: InvalidInput for a limit below 1 or above commands.MaxLimit
// (details.flag --limit); those of the read.
func (p *Project) Ready(ctx context.Context, req ReadyRequest) (*ReadyResult, error) {
	limit, all := 0, req.All
	if req.Limit != nil {
		n, err := commands.LimitOf("ready", "--limit", req.Limit, 0)
		if err != nil {
			return nil, err
		}
		limit = n
	}
	res := &ReadyResult{Ready: []ReadyItem{}}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, now int64) error {
		res.ProjectRevision = rev
		rs, err := projections.ReadinessAt(r.Conn, rev, now, rev == r.Head)
		if err != nil {
			return err
		}
		if err := holdBack(r, rev, rs); err != nil {
			return err
		}
		gs, err := projections.GoalsAt(r.Conn, rev)
		if err != nil {
			return err
		}
		goals := intake.GoalKeys(gs)
		var notReady []ReadyItem
		if all {
			notReady = []ReadyItem{}
			res.NotReady = &notReady
		}
		for _, x := range rs {
			it := readyItem(x, goals)
			if it.Executable {
				res.ExecutableTotal++
			}
			switch {
			case x.Ready && (it.Executable || !req.Executable):
				res.ReadyTotal++
				if limit <= 0 || len(res.Ready) < limit {
					res.Ready = append(res.Ready, it)
				}
			case all:
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
