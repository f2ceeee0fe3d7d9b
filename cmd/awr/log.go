package main

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/internal/project"
)

type logCmd struct {
	project.LogRequest
	Follow bool `name:"follow" short:"f" help:"Keep printing events as they commit, from --since or the head, until interrupted (Ctrl-C); one JSON object per line with --json."`
}

// Run lists events, or follows them.
func (c *logCmd) Run(app *App, kctx *kong.Context) error {
	if c.Follow {
		return c.follow(app, kctx)
	}
	return call(app, (*project.Project).Log, c.LogRequest, func(w io.Writer, res *project.LogResult) {
		for _, e := range res.Events {
			logLine(w, e)
		}
		if res.NextSince > 0 {
			fmt.Fprintf(w, "… more events: awr log --since %d\n", res.NextSince)
		}
		if len(res.Events) == 0 {
			fmt.Fprintf(w, "no events match (project_revision %d)\n", res.ProjectRevision)
		}
	})
}

// follow prints each event as it commits, one whole line per write, until
// the command's context is cancelled (SIGINT, SIGTERM: exit 0).
func (c *logCmd) follow(app *App, kctx *kong.Context) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	req := project.FollowRequest{LogRequest: c.LogRequest, FromHead: !flagSet(kctx, "since")}
	return p.Follow(app.Ctx, req, func(e project.LogEvent) error {
		var line []byte
		if app.JSON {
			b, err := json.Marshal(e)
			if err != nil {
				return err
			}
			line = append(b, '\n')
		} else {
			var buf lineBuf
			logLine(&buf, e)
			line = []byte(project.Inert(string(buf)))
		}
		_, err := app.Stdout.Write(line)
		return err
	})
}

type lineBuf []byte

func (b *lineBuf) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// logLine is one event as `awr log` prints it.
func logLine(w io.Writer, e project.LogEvent) {
	fmt.Fprintf(w, "%6d  %s  %-20s %-34s %s\n", e.Seq, time.UnixMilli(e.OccurredAt).UTC().Format("2006-01-02T15:04:05Z"), e.Kind, project.SafeLine(e.Stream), project.SafeLine(eventSummary(e)))
}

// flagSet reports whether the flag named name was given on the command
// line.
func flagSet(kctx *kong.Context, name string) bool {
	for _, f := range kctx.Flags() {
		if f.Name == name {
			return f.Set
		}
	}
	return false
}

// clip shortens s to at most n runes, marking the cut; --json shows all.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
