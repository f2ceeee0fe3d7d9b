package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/project"
)

type statusCmd struct {
	project.StatusRequest
	Full bool `name:"full" help:"Also show the log's size, last event time, head hash and each projection's version and freshness (--json always has them)."`
}

// shownStale is how many stale sessions, and how many lapsed ones, the
// short status names.
const shownStale = 3

// Run prints the project status: short by default (counts, queues, stale
// sessions, next action), everything with --full.
func (c *statusCmd) Run(app *App) error {
	return call(app, (*project.Project).Status, c.StatusRequest, func(w io.Writer, res *project.StatusResult) {
		tw := newTable(w)
		statusRows(tw, res, c.Full)
		tw.Flush()
		statusSessionLines(w, res, c.Full)
		fmt.Fprintf(w, "next: %s\n", res.NextAction)
	})
}

// statusRows writes the status table: the project and its revision, the
// store, the sessions, claims and items, the queues, goals, the last
// reindex and the projections (every one with full, else the stale).
func statusRows(tw io.Writer, res *project.StatusResult, full bool) {
	fmt.Fprintf(tw, "project\t%s\n", project.SafeLine(res.ProjectName))
	if res.At != nil {
		fmt.Fprintf(tw, "project_revision\t%d (as of --at; head is %d)\n", res.ProjectRevision, res.Head)
	} else {
		fmt.Fprintf(tw, "project_revision\t%d\n", res.ProjectRevision)
	}
	if full {
		fmt.Fprintf(tw, "events\t%d\n", res.EventCount)
		if res.LastEventAt > 0 {
			fmt.Fprintf(tw, "last event\t%s\n", time.UnixMilli(res.LastEventAt).UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(tw, "head hash\t%s\n", res.HeadHash)
	}
	if res.Store != nil {
		fmt.Fprintf(tw, "store\tshared: %s (this machine's cache: %s)\n", res.Store.Shared, res.Store.Path)
	}
	for _, l := range replicaLines(res.Origin, res.Fork) {
		fmt.Fprintf(tw, "%s\t%s\n", l[0], l[1])
	}
	sessions := fmt.Sprintf("%d active", res.Sessions.Active)
	if res.Sessions.Stale > 0 {
		sessions += fmt.Sprintf(", %d of them stale", res.Sessions.Stale)
	}
	fmt.Fprintf(tw, "sessions\t%s\n", sessions)
	fmt.Fprintf(tw, "claims\t%d live\n", res.LiveClaims)
	fmt.Fprintf(tw, "work items\t%d (%d ready)\n", res.WorkItems, res.ReadyCount)
	if len(res.Counts) > 0 {
		var parts []string
		for _, st := range []string{"draft", "planned", "ready", "in_progress", "blocked", "completed", "cancelled", "unknown"} {
			if n := res.Counts[st]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, st))
			}
		}
		fmt.Fprintf(tw, "by status\t%s\n", strings.Join(parts, ", "))
	}
	queueRow(tw, "current", res.Queues.Current, res.Queues.CurrentTotal)
	queueRow(tw, "ready", res.Queues.Ready, res.Queues.ReadyTotal)
	queueRow(tw, "waiting", res.Queues.Waiting, res.Queues.WaitingTotal)
	queueRow(tw, "blocked", res.Queues.Blocked, res.Queues.BlockedTotal)
	statusGoals(tw, res.Goals)
	statusReindex(tw, res.LastReindex)
	for _, p := range res.Projections {
		if full || !p.Fresh {
			fresh := "fresh"
			if !p.Fresh {
				fresh = "STALE (run: awr replay)"
			}
			fmt.Fprintf(tw, "projection %s\tv%d at seq %d, %s\n", p.Name, p.Version, p.LastSeq, fresh)
		}
	}
}

// queueRow writes a queue's row: its first 8 keys (with the holder's
// agent) and how many more of the total.
func queueRow(tw io.Writer, name string, items []project.QueueItem, total int) {
	if len(items) == 0 {
		return
	}
	var keys []string
	for i, it := range items {
		if i == 8 {
			keys = append(keys, fmt.Sprintf("… %d more", total-8))
			break
		}
		k := project.SafeLine(it.Key)
		if it.Holder != nil {
			k += " (" + project.SafeLine(it.Holder.Agent) + ")"
		}
		keys = append(keys, k)
	}
	fmt.Fprintf(tw, "%s\t%s\n", name, strings.Join(keys, ", "))
}

// statusSessionLines writes the lapsed sessions (to resume) and the stale
// ones (to end), shownStale of each unless full, and how many more.
func statusSessionLines(w io.Writer, res *project.StatusResult, full bool) {
	lapsed := map[string]bool{}
	for i, l := range res.LapsedSessions {
		lapsed[l.ID] = true
		if i >= shownStale && !full {
			continue // counted below
		}
		fmt.Fprintf(w, "lapsed session %s on %s (%s): its claim lapsed at %s while it was active; %s: %s\n",
			l.ID, l.Work, safe(l.Agent), ms(l.ExpiredAt), l.Unsaved(), l.ResumeCommand)
	}
	shownLapsed := len(res.LapsedSessions)
	if !full {
		shownLapsed = min(shownLapsed, shownStale)
	}
	if more := res.Sessions.Lapsed - shownLapsed; more > 0 {
		// status lists a page of them; doctor names every one.
		where := "awr doctor"
		if !full && res.Sessions.Lapsed <= len(res.LapsedSessions) {
			where = "awr status --full"
		}
		fmt.Fprintf(w, "… %d more lapsed sessions: %s\n", more, where)
	}
	shown, skipped := 0, 0
	for _, s := range res.StaleSessions {
		if lapsed[s.ID] {
			skipped++
			continue // to resume, not to end: said above
		}
		if shown == shownStale && !full {
			break
		}
		fmt.Fprintf(w, "stale session %s on %s (%s), idle since %s: %s\n", s.ID, s.Work, safe(s.Agent), ms(s.IdleSince), s.EndCommand)
		shown++
	}
	if more := res.Sessions.Stale - shown - skipped; more > 0 {
		fmt.Fprintf(w, "… %d more stale sessions: awr session list --stale\n", more)
	}
}

// statusGoals writes the goals row: each goal's key and how many work
// items serve it, the first 8 (intake inspect lists them all).
func statusGoals(w io.Writer, goals []project.GoalView) {
	if len(goals) == 0 {
		return
	}
	var parts []string
	for i, g := range goals {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… %d more: awr intake inspect", len(goals)-8))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d items)", project.SafeLine(g.Key), g.WorkTotal))
	}
	fmt.Fprintf(w, "goals\t%s\n", strings.Join(parts, ", "))
}

// statusReindex writes what the last reindex changed: the counts, then
// one row per source with the keys.
func statusReindex(w io.Writer, lr *project.LastReindex) {
	if lr == nil {
		return
	}
	fmt.Fprintf(w, "last reindex\tseq %d: %d added, %d changed, %d removed\n", lr.Seq, lr.ItemsAdded, lr.ItemsChanged, lr.ItemsRemoved)
	for _, s := range lr.Sources {
		var parts []string
		list := func(name string, keys []string, n int) {
			if n == 0 {
				return
			}
			ks := make([]string, len(keys))
			for i, k := range keys {
				ks[i] = project.SafeLine(k)
			}
			if n > len(keys) {
				ks = append(ks, fmt.Sprintf("… %d more", n-len(keys)))
			}
			parts = append(parts, name+" "+strings.Join(ks, ", "))
		}
		list("added", s.Added, s.AddedCount)
		list("changed", s.Changed, s.ChangedCount)
		list("removed", s.Removed, s.RemovedCount)
		switch {
		case s.Dropped:
			parts = append(parts, "source dropped from the manifest")
		case s.First:
			parts = append(parts, "indexed for the first time")
		case len(parts) == 0:
			parts = append(parts, "no item changed")
		}
		fmt.Fprintf(w, "  %s\t%s\n", project.SafeLine(s.Path), strings.Join(parts, "; "))
	}
}
