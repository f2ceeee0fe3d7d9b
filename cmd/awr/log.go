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
	s := newEventStream(app, "", inertLine)
	err = p.LogEach(app.Ctx, c.LogRequest, s.start, s.event)
	return s.end(err, func(head int64) string { return fmt.Sprintf("no events match (project_revision %d)", head) })
}

// eventStream writes a listing of events as it is read (`awr log --all`,
// `awr work history --all`), in bounded memory: a text line per event
// (line, with its control characters escaped), or with --json the
// object the listing's page prints (its fields before events, then
// events and count), written element by element.
type eventStream struct {
	app     *App
	w       *bufio.Writer
	fields  string // the object's fields before "project_revision" (each followed by a comma)
	line    func(project.LogEvent) string
	n       int
	started bool
	head    int64
}

func newEventStream(app *App, fields string, line func(project.LogEvent) string) *eventStream {
	return &eventStream{app: app, w: bufio.NewWriter(app.Stdout), fields: fields, line: line}
}

// start opens the listing read at revision rev.
func (s *eventStream) start(rev int64) error {
	s.started, s.head = true, rev
	if !s.app.JSON {
		return nil
	}
	_, err := fmt.Fprintf(s.w, `{%s"project_revision":%d,"events":[`, s.fields, rev)
	return err
}

// event writes one event; it stops the listing when the command is
// interrupted.
func (s *eventStream) event(e project.LogEvent) error {
	if err := s.app.Ctx.Err(); err != nil {
		return err
	}
	s.n++
	if !s.app.JSON {
		_, err := s.w.WriteString(s.line(e))
		return err
	}
	if s.n > 1 {
		if err := s.w.WriteByte(','); err != nil {
			return err
		}
	}
	return writeJSONValue(s.w, e)
}

// end closes the listing after the read returned err: the object's
// count with --json, or the line none says when no event matched.
func (s *eventStream) end(err error, none func(head int64) string) error {
	if err != nil {
		_ = s.w.Flush()
		return err
	}
	switch {
	case s.app.JSON && s.started:
		fmt.Fprintf(s.w, `],"count":%d}`+"\n", s.n)
	case s.n == 0:
		fmt.Fprintln(s.w, none(s.head))
	}
	return s.w.Flush()
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
