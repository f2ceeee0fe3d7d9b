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
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.ClaimRenew(app.Ctx, c.ClaimRenewRequest)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "claim on %s renewed until %s (fencing token %d)\n", res.Claim.Work, ms(res.Claim.ExpiresAt), res.Claim.FencingToken)
	})
}

type claimReleaseCmd struct {
	project.ClaimReleaseRequest
}

// Run releases a claim.
func (c *claimReleaseCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.ClaimRelease(app.Ctx, c.ClaimReleaseRequest)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) { fmt.Fprintf(w, "claim on %s released\n", res.Claim.Work) })
}
