package project

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
)

// The fork of an imported replica.
type (
	// ForkRequest is `awr fork` and awr_fork.
	ForkRequest = commands.ForkRequest
	// ForkResult is `awr fork`.
	ForkResult = commands.ForkResult
	// ForkView is where a fork began, as status shows it.
	ForkView = commands.ForkView
	// Origin is where an imported replica came from.
	Origin = events.Origin
)

// IsReplica reports whether a project with this origin and latest fork
// (status's origin and fork) refuses writes.
func IsReplica(origin *Origin, fork *ForkView) bool { return commands.IsReplica(origin, fork) }

// Fork previews the fork of an imported replica (what --accept would
// append) or, with req.Accept, appends project_forked, after which the copy
// accepts writes; who forks is req.Agent, else the login name. Errors:
// those of commands.Fork.
func (p *Project) Fork(ctx context.Context, req ForkRequest) (*ForkResult, error) {
	if req.Accept && req.Agent == "" {
		req.Agent = loginName()
	}
	return command(ctx, p, commands.Fork, req)
}

// ForkSummary returns where a project_forked event says its fork began
// ("fork of P at seq N (hash H): reason"), and false for any other event.
func ForkSummary(e LogEvent) (string, bool) {
	if e.Kind != events.KindProjectForked {
		return "", false
	}
	var pl events.ProjectForked
	if json.Unmarshal(e.Payload, &pl) != nil {
		return "", false
	}
	s := fmt.Sprintf("fork of %s at seq %d (hash %.12s)", pl.OriginProjectID, pl.OriginHeadSeq, pl.OriginHeadHash)
	if pl.Reason != "" {
		s += ": " + pl.Reason
	}
	return s, true
}
