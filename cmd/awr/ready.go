package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/internal/project"
)

type readyCmd struct {
	project.ReadyRequest
}

// Run lists claimable work.
func (c *readyCmd) Run(app *App) error {
	return call(app, (*project.Project).Ready, c.ReadyRequest, func(w io.Writer, res *project.ReadyResult) {
		tw := newTable(w)
		if len(res.Ready) == 0 {
			fmt.Fprintf(tw, "no work is ready (project_revision %d)\n", res.ProjectRevision)
		} else {
			fmt.Fprintln(tw, "KEY\tPRIORITY\tTITLE\tEXECUTABLE\tSOURCE\tNEXT ACTION")
		}
		for _, it := range res.Ready {
			lines := wrap(it.NextAction, 60)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s:%d\t%s\n", project.SafeLine(it.Key), project.SafeLine(it.Priority), project.SafeLine(it.Title), executable(it), project.SafeLine(it.Source.Path), it.Source.LineStart, lines[0])
			for _, l := range lines[1:] {
				fmt.Fprintf(tw, "\t\t\t\t\t%s\n", l)
			}
		}
		switch {
		case res.NextCursor != "":
			fmt.Fprintf(tw, "… %d ready in all; the next page: %s\n", res.ReadyTotal, nextReadyPage(c.ReadyRequest, res.NextCursor))
		case res.ReadyTotal > len(res.Ready):
			fmt.Fprintf(tw, "… %d ready in all\n", res.ReadyTotal)
		}
		if res.NotReady != nil && len(*res.NotReady) > 0 {
			fmt.Fprintln(tw, "\nNOT READY\tSTATUS\tWHY")
			for _, it := range *res.NotReady {
				var why []string
				for _, r := range it.Reasons {
					why = append(why, project.SafeLine(r.Message))
				}
				for _, r := range it.NotExecutable {
					why = append(why, project.SafeLine(r.Message))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", project.SafeLine(it.Key), project.SafeLine(it.Status), strings.Join(why, "; "))
			}
		}
		tw.Flush()
		for _, it := range res.Ready {
			if it.Executable {
				fmt.Fprintf(w, "next: awr session start --work %s --agent \"$USER\" --claim\n", it.Key)
				return
			}
		}
		if len(res.Ready) > 0 {
			// Claimable, but not organized enough to start on.
			fmt.Fprintln(w, "next: awr intake inspect")
		}
	})
}

// nextReadyPage is the command that lists the page after cursor, with
// the request's other flags.
func nextReadyPage(req project.ReadyRequest, cursor string) string {
	var flags []string
	if req.Executable {
		flags = append(flags, "--executable")
	}
	if req.All {
		flags = append(flags, "--all")
	}
	return nextPage("awr ready", req.At, flags, req.Limit, cursor)
}

// nextPage is the command that lists the page after cursor of a listing
// read (awr ready, awr session list): cmd with --at, the request's own
// flags, --limit and --cursor.
func nextPage(cmd string, at *int64, flags []string, limit *int, cursor string) string {
	if at != nil {
		cmd += fmt.Sprintf(" --at %d", *at)
	}
	for _, f := range flags {
		cmd += " " + f
	}
	if limit != nil {
		cmd += fmt.Sprintf(" --limit %d", *limit)
	}
	return cmd + " --cursor " + cursor
}

// executable is the EXECUTABLE cell of a ready item: yes, or no and why.
func executable(it project.ReadyItem) string {
	if it.Executable {
		return "yes"
	}
	var why []string
	for _, r := range it.NotExecutable {
		why = append(why, project.SafeLine(r.Message))
	}
	return "no: " + strings.Join(why, ", ")
}

// wrap breaks s into lines of at most width characters at spaces (a
// longer word stands alone); an empty s is one empty line.
func wrap(s string, width int) []string {
	words := strings.Fields(s)
	if len(words) == 0 {
		return []string{""}
	}
	var lines []string
	cur := words[0]
	for _, w := range words[1:] {
		if len([]rune(cur))+1+len([]rune(w)) > width {
			lines = append(lines, cur)
			cur = w
			continue
		}
		cur += " " + w
	}
	return append(lines, cur)
}
