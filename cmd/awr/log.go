package main

import (
	"fmt"
	"io"
	"time"

	"github.com/awr-dev/awr/queries"
	"github.com/awr-dev/awr/service"
)

type logCmd struct {
	atFlag
	Session string `help:"Only events concerning this session." placeholder:"ID"`
	Work    string `help:"Only events concerning this work item." placeholder:"KEY"`
	Kind    string `help:"Only events of this kind." placeholder:"KIND"`
	Since   int64  `help:"Only events after this revision." placeholder:"REV"`
	Until   int64  `help:"Only events up to and including this revision." placeholder:"REV"`
	Limit   *int   `help:"At most N events (default 1000; 0 for all)." placeholder:"N"`
}

// Run lists events.
func (c *logCmd) Run(app *App) error {
	st, err := app.Store()
	if err != nil {
		return err
	}
	rev, err := c.rev()
	if err != nil {
		return err
	}
	limit, err := service.LogLimit(c.Limit)
	if err != nil {
		return err
	}
	res, err := queries.Log(app.Ctx, st, queries.At{Rev: rev, Now: app.Now()}, queries.LogFilter{
		Session: c.Session, Work: c.Work, Kind: c.Kind, Since: c.Since, Until: c.Until, Limit: limit,
	})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		for _, e := range res.Events {
			fmt.Fprintf(w, "%6d  %s  %-20s %-34s %s\n", e.Seq, time.UnixMilli(e.OccurredAt).UTC().Format("2006-01-02T15:04:05Z"), e.Kind, e.Stream, clip(string(e.Payload), 100))
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
