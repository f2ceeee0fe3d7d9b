package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/project"
)

type claimCmd struct {
	Renew   claimRenewCmd   `cmd:"" help:"Extend the lease of the session's claim (the holder only)."`
	Release claimReleaseCmd `cmd:"" help:"Let the session's claim go early."`
}

type claimRenewCmd struct {
	project.ClaimRenewRequest
}

// Run renews a lease.
func (c *claimRenewCmd) Run(app *App) error {
	return call(app, (*project.Project).ClaimRenew, c.ClaimRenewRequest, func(w io.Writer, res *project.ClaimResult) {
		fmt.Fprintf(w, "claim on %s renewed until %s (fencing token %d)\n", res.Claim.Work, ms(res.Claim.ExpiresAt), res.Claim.FencingToken)
	})
}

type claimReleaseCmd struct {
	project.ClaimReleaseRequest
}

// Run releases a claim.
func (c *claimReleaseCmd) Run(app *App) error {
	return call(app, (*project.Project).ClaimRelease, c.ClaimReleaseRequest, func(w io.Writer, res *project.ClaimResult) { fmt.Fprintf(w, "claim on %s released\n", res.Claim.Work) })
}
