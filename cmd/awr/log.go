package main

import (
	"fmt"
	"io"
	"time"

	"github.com/awr-dev/awr/project"
)

type logCmd struct {
	project.LogRequest
}

// Run lists events.
func (c *logCmd) Run(app *App) error {
	return call(app, (*project.Project).Log, c.LogRequest, func(w io.Writer, res *project.LogResult) {
		for _, e := range res.Events {
			fmt.Fprintf(w, "%6d  %s  %-20s %-34s %s\n", e.Seq, time.UnixMilli(e.OccurredAt).UTC().Format("2006-01-02T15:04:05Z"), e.Kind, e.Stream, eventSummary(e))
		}
		if res.NextSince > 0 {
			fmt.Fprintf(w, "… more events: awr log --since %d\n", res.NextSince)
		}
		if len(res.Events) == 0 {
			fmt.Fprintf(w, "no events match (project_revision %d)\n", res.ProjectRevision)
		}
	})
}

// clip shortens s to at most n runes, marking the cut; --json shows all.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
