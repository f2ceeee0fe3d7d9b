package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/project"
)

type replayCmd struct {
	project.ReplayRequest
}

// Run rebuilds (or verifies) the projections.
func (c *replayCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.Replay(app.Ctx, c.ReplayRequest)
	if res == nil {
		return err
	}
	if rerr := app.render(res, func(w io.Writer) {
		verb := "rebuilt"
		if c.Verify {
			verb = "verified"
		}
		fmt.Fprintf(w, "%s %d projections from %d events (project_revision %d)\n", verb, len(res.Projections), res.EventsApplied, res.ProjectRevision)
		for _, p := range res.Projections {
			fmt.Fprintf(w, "  %-12s v%d  %s\n", p.Name, p.Version, p.Checksum[:16])
		}
		for _, m := range res.Mismatches {
			fmt.Fprintf(w, "  MISMATCH %s: live %s, rebuilt %s\n", m.Name, m.Live[:16], m.Rebuilt[:16])
		}
	}); rerr != nil {
		return rerr
	}
	return err
}
