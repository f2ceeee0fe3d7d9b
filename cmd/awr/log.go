package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
)

type logCmd struct {
	project.LogRequest
	All    bool `name:"all" help:"Every matching event, streamed as it is read (not with --limit or --follow)."`
	Follow bool `name:"follow" short:"f" help:"Keep printing events as they commit, from --since or the head, until interrupted (Ctrl-C); one JSON object per line with --json."`
}

// Run lists events, or follows them.
func (c *logCmd) Run(app *App, kctx *kong.Context) error {
	if c.Limit != nil && *c.Limit == 0 && !c.All {
		// --limit 0 meant every event before --all: kept for a release.
		c.All, c.Limit = true, nil
	}
	switch {
	case c.All && (c.Limit != nil || c.Follow):
		return fault.New(fault.InvalidInput, "log: --all lists every event: not with --limit or --follow").WithHint("awr log --all")
	case c.All:
		return c.all(app)
	case c.Follow:
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

// all prints every matching event as it is read, in bounded memory: text
// lines, or with --json the object `awr log --json` prints (events, count)
// written event by event.
func (c *logCmd) all(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(app.Stdout)
	n, started, head := 0, false, int64(0)
	err = p.LogEach(app.Ctx, c.LogRequest, func(rev int64) error {
		started, head = true, rev
		if app.JSON {
			_, err := fmt.Fprintf(w, `{"project_revision":%d,"events":[`, rev)
			return err
		}
		return nil
	}, func(e project.LogEvent) error {
		if err := app.Ctx.Err(); err != nil {
			return err
		}
		n++
		if !app.JSON {
			_, err := w.WriteString(inertLine(e))
			return err
		}
		if n > 1 {
			if err := w.WriteByte(','); err != nil {
				return err
			}
		}
		return writeJSONValue(w, e)
	})
	if err != nil {
		_ = w.Flush()
		return err
	}
	switch {
	case app.JSON && started:
		fmt.Fprintf(w, `],"count":%d}`+"\n", n)
	case n == 0:
		fmt.Fprintf(w, "no events match (project_revision %d)\n", head)
	}
	return w.Flush()
}

// writeJSONValue writes v as JSON without HTML escaping and without the
// encoder's newline: one element of an array written as it is read.
func writeJSONValue(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	return err
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
			line = []byte(inertLine(e))
		}
		_, err := app.Stdout.Write(line)
		return err
	})
}

// inertLine is logLine of e with its control characters escaped: a line
// written as it is read (--all, --follow), not through render.
func inertLine(e project.LogEvent) string {
	var b strings.Builder
	logLine(&b, e)
	return project.Inert(b.String())
}

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
