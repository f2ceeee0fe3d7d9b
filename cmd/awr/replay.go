package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type replayCmd struct {
	project.ReplayRequest
}

// Run rebuilds (or verifies) the projections.
func (c *replayCmd) Run(app *App) error {
	return call(app, (*project.Project).Replay, c.ReplayRequest, func(w io.Writer, res *project.RebuildResult) {
		verb := "rebuilt"
		if c.Verify {
			verb = "verified"
		}
		fmt.Fprintf(w, "%s %d projections from %d events (project_revision %d)\n", verb, len(res.Projections), res.EventsApplied, res.ProjectRevision)
		for _, p := range res.Projections {
			if p.Checksum == "" {
				fmt.Fprintf(w, "  %-12s v%d\n", p.Name, p.Version)
				continue
			}
			fmt.Fprintf(w, "  %-12s v%d  %s\n", p.Name, p.Version, p.Checksum[:16])
		}
		for _, m := range res.Mismatches {
			fmt.Fprintf(w, "  MISMATCH %s: live %s, rebuilt %s\n", m.Name, m.Live[:16], m.Rebuilt[:16])
		}
	})
}
