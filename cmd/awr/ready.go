package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/awr-dev/awr/project"
)

type readyCmd struct {
	project.ReadyRequest
}

// Run lists claimable work.
func (c *readyCmd) Run(app *App) error {
	return call(app, (*project.Project).Ready, c.ReadyRequest, func(w io.Writer, res *project.ReadyResult) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		if len(res.Ready) == 0 {
			fmt.Fprintf(tw, "no work is ready (project_revision %d)\n", res.ProjectRevision)
		} else {
			fmt.Fprintln(tw, "KEY\tPRIORITY\tTITLE\tNEXT ACTION\tSOURCE")
		}
		for _, it := range res.Ready {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s:%d\n", it.Key, it.Priority, it.Title, clip(it.NextAction, 60), it.Source.Path, it.Source.LineStart)
		}
		if res.ReadyTotal > len(res.Ready) {
			fmt.Fprintf(tw, "… %d ready in all\n", res.ReadyTotal)
		}
		if res.NotReady != nil && len(*res.NotReady) > 0 {
			fmt.Fprintln(tw, "\nNOT READY\tSTATUS\tWHY")
			for _, it := range *res.NotReady {
				var why []string
				for _, r := range it.Reasons {
					why = append(why, r.Message)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", it.Key, it.Status, strings.Join(why, "; "))
			}
		}
		tw.Flush()
		if len(res.Ready) > 0 {
			fmt.Fprintf(w, "next: awr session start --work %s --agent \"$USER\" --claim\n", res.Ready[0].Key)
		}
	})
}
