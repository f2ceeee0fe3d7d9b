package main

import (
	"fmt"
	"io"
	"time"

	"github.com/awr-dev/awr/internal/project"
)

type forkCmd struct {
	project.ForkRequest
}

// Run previews or makes the fork of an imported replica.
func (c *forkCmd) Run(app *App) error {
	return call(app, (*project.Project).Fork, c.ForkRequest, func(w io.Writer, res *project.ForkResult) {
		switch {
		case res.Accepted:
			fmt.Fprintf(w, "forked: project_forked at seq %d, a fork of %s at seq %d (hash %.12s)\n", res.Fork.Seq, res.Fork.Origin.ProjectID, res.Fork.Origin.HeadSeq, res.Fork.Origin.HeadHash)
			fmt.Fprintf(w, "this copy is project %s from now on and accepts writes; its history diverges from the origin's after that seq\n", res.Fork.ProjectID)
		case res.WouldAppend != nil:
			fmt.Fprintln(w, replicaLine(res.Origin, nil))
			fmt.Fprintf(w, "awr fork --accept would append project_forked at seq %d; from then on this copy accepts writes and its history diverges from %s's\n", res.WouldAppend.Seq, res.Origin.ProjectID)
		case res.Fork != nil:
			fmt.Fprintln(w, replicaLine(res.Origin, res.Fork))
			fmt.Fprintln(w, "it accepts writes; nothing to fork")
		default:
			fmt.Fprintln(w, "not a replica: this project was not imported, it accepts writes; nothing to fork")
		}
		if res.Next != "" {
			fmt.Fprintf(w, "next: %s\n", res.Next)
		}
	})
}

// replicaLine says in one line where an imported project came from or
// where its fork began ("" for a project that is neither).
func replicaLine(o *project.Origin, f *project.ForkView) string {
	lines := replicaLines(o, f)
	if len(lines) == 0 {
		return ""
	}
	return lines[len(lines)-1][1]
}

// replicaLines are the labelled lines status prints: the fork, where one
// is in the history, and the replica, while the project refuses writes.
func replicaLines(o *project.Origin, f *project.ForkView) [][2]string {
	var out [][2]string
	if f != nil {
		out = append(out, [2]string{"fork", fmt.Sprintf("project %s, a fork of %s at seq %d (hash %.12s), forked at seq %d on %s", f.ProjectID, f.Origin.ProjectID, f.Origin.HeadSeq, f.Origin.HeadHash, f.Seq, stamp(f.At))})
	}
	if project.IsReplica(o, f) {
		out = append(out, [2]string{"replica", fmt.Sprintf("read-only replica of %s at seq %d (hash %.12s), imported %s; writes are refused until awr fork --accept", o.ProjectID, o.HeadSeq, o.HeadHash, stamp(o.ImportedAt))})
	}
	return out
}

func stamp(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339) }

// eventSummary is what `awr log` prints after an event's stream: the
// payload, clipped, or for a fork where it began.
func eventSummary(e project.LogEvent) string {
	if s, ok := project.ForkSummary(e); ok {
		return clip(s, 100)
	}
	return clip(string(e.Payload), 100)
}
