package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/project"
)

type diffCmd struct {
	project.DiffRequest
}

// Run shows what changed between two revisions.
func (c *diffCmd) Run(app *App) error {
	return call(app, (*project.Project).Diff, c.DiffRequest, func(w io.Writer, res *project.DiffResult) {
		printDiff(w, res, c.Limit)
	})
}

// printDiff renders a diff for people: the events, then each read model's
// changed entities (+ added, - removed, ~ changed) with their fields,
// each list followed by the command of its next page (with limit, the
// --limit asked) when more follow.
func printDiff(w io.Writer, res *project.DiffResult, limit *int) {
	scope := ""
	switch {
	case res.Work != "":
		scope = " (work " + res.Work + ")"
	case res.Session != "":
		scope = " (session " + res.Session + ")"
	case res.Seat != "":
		scope = " (seat " + res.Seat + ")"
	}
	fmt.Fprintf(w, "diff %d..%d%s: %s, %s changed\n", res.From, res.To, scope, count(res.EventsTotal, "event", "events"), count(res.Changed, "entity", "entities"))
	if len(res.Events) > 0 {
		fmt.Fprintln(w, "events")
		for _, e := range res.Events {
			fmt.Fprintf(w, "  %6d  %s  %-20s %-34s %s\n", e.Seq, time.UnixMilli(e.OccurredAt).UTC().Format("2006-01-02T15:04:05Z"), e.Kind, e.Stream, e.Summary)
		}
	}
	if res.EventsNextCursor != "" {
		fmt.Fprintf(w, "(more events follow: %s --events-cursor %s)\n", diffCommand(res, limit), res.EventsNextCursor)
	}
	models := []struct {
		name string
		ents []project.DiffEntity
	}{
		{"sessions", res.Changes.Sessions}, {"claims", res.Changes.Claims}, {"checkpoints", res.Changes.Checkpoints},
		{"knowledge", res.Changes.Knowledge}, {"work items", res.Changes.WorkItems}, {"bindings", res.Changes.Bindings}, {"seats", res.Changes.Seats},
	}
	for _, m := range models {
		if len(m.ents) == 0 {
			continue
		}
		fmt.Fprintln(w, m.name)
		for _, e := range m.ents {
			mark := map[string]string{project.DiffAdded: "+", project.DiffRemoved: "-", project.DiffChanged: "~"}[e.Change]
			work := ""
			if e.Work != "" && e.Work != e.ID {
				work = " (" + e.Work + ")"
			}
			fmt.Fprintf(w, "  %s %s%s\n", mark, e.ID, work)
			for _, f := range e.Fields {
				switch e.Change {
				case project.DiffAdded:
					fmt.Fprintf(w, "      %s: %s\n", f.Field, diffValue(f.Field, f.After))
				case project.DiffRemoved:
					fmt.Fprintf(w, "      %s: %s\n", f.Field, diffValue(f.Field, f.Before))
				default:
					fmt.Fprintf(w, "      %s: %s → %s\n", f.Field, diffValue(f.Field, f.Before), diffValue(f.Field, f.After))
				}
			}
		}
	}
	if res.ChangesNextCursor != "" {
		fmt.Fprintf(w, "(more changed entities follow: %s --changes-cursor %s)\n", diffCommand(res, limit), res.ChangesNextCursor)
	}
	if res.Hidden > 0 {
		fmt.Fprintf(w, "(%s of bookkeeping left out: source content hashes, items' lines in their files; awr diff --from %d --to %d --all shows them)\n",
			count(res.Hidden, "field", "fields"), res.From, res.To)
	}
	if res.Changed == 0 && res.EventsTotal == 0 {
		fmt.Fprintf(w, "nothing changed between %d and %d\n", res.From, res.To)
	}
}

// diffCommand is the awr diff that gave res, its revisions pinned: a
// next page's command with its cursor added.
func diffCommand(res *project.DiffResult, limit *int) string {
	cmd := fmt.Sprintf("awr diff --from %d --to %d", res.From, res.To)
	for _, f := range []struct{ flag, value string }{{"--work", res.Work}, {"--session", res.Session}, {"--seat", res.Seat}} {
		if f.value != "" {
			cmd += " " + f.flag + " " + shellQuote(f.value)
		}
	}
	if res.All {
		cmd += " --all"
	}
	if limit != nil {
		cmd += fmt.Sprintf(" --limit %d", *limit)
	}
	return cmd
}

// count is n with the singular or plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// diffValue renders a field's JSON value for people, whole: a string
// without its quotes (its lines after the first indented under the
// field), a time (a field named *_at holding UTC milliseconds) in ISO
// 8601 UTC, null as "(none)", anything else as its JSON.
func diffValue(field string, raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case nil:
		return "(none)"
	case string:
		if x == "" {
			return `""`
		}
		return strings.ReplaceAll(x, "\n", "\n        ")
	case float64:
		leaf := field[strings.LastIndex(field, ".")+1:]
		if strings.HasSuffix(leaf, "_at") && x > 0 && x == float64(int64(x)) {
			return time.UnixMilli(int64(x)).UTC().Format("2006-01-02T15:04:05.000Z")
		}
	}
	return string(raw)
}
