package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type claimCmd struct {
	Acquire claimAcquireCmd `cmd:"" help:"Give an active session the claim on its work item."`
	Renew   claimRenewCmd   `cmd:"" help:"Extend the lease of the session's claim (the holder only)."`
	Release claimReleaseCmd `cmd:"" help:"Let the session's claim go early."`
}

type claimAcquireCmd struct {
	project.ClaimAcquireRequest
}

// Run acquires a claim.
func (c *claimAcquireCmd) Run(app *App) error {
	return call(app, (*project.Project).ClaimAcquire, c.ClaimAcquireRequest, claimAcquiredText(app))
}

// claimAcquiredText renders a claim taken, by `awr claim acquire` and
// `awr work claim` alike: its id, work item, session, fencing token and
// lease.
func claimAcquiredText(app *App) func(io.Writer, *project.ClaimResult) {
	return func(w io.Writer, res *project.ClaimResult) {
		fmt.Fprintf(w, "claim %s on %s for session %s, fencing token %d, %s\n", res.Claim.ID, res.Claim.Work, res.Claim.SessionID, res.Claim.FencingToken, lease(res.Claim.ExpiresAt, app.Now().UnixMilli()))
	}
}

type claimRenewCmd struct {
	project.ClaimRenewRequest
}

// Run renews a lease.
func (c *claimRenewCmd) Run(app *App) error {
	return call(app, (*project.Project).ClaimRenew, c.ClaimRenewRequest, func(w io.Writer, res *project.ClaimResult) {
		fmt.Fprintf(w, "claim on %s renewed, %s (fencing token %d)\n", res.Claim.Work, lease(res.Claim.ExpiresAt, app.Now().UnixMilli()), res.Claim.FencingToken)
	})
}

type claimReleaseCmd struct {
	project.ClaimReleaseRequest
}

// Run releases a claim.
func (c *claimReleaseCmd) Run(app *App) error {
	return call(app, (*project.Project).ClaimRelease, c.ClaimReleaseRequest, func(w io.Writer, res *project.ClaimResult) { fmt.Fprintf(w, "claim on %s released\n", res.Claim.Work) })
}
