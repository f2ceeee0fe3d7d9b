package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/internal/project"
)

type initCmd struct {
	project.InitRequest
}

// Run previews or applies project initialization.
func (c *initCmd) Run(app *App) error {
	return call(app, (*project.Project).Init, c.InitRequest, func(w io.Writer, res *project.InitResult) { printPreview(w, res) })
}

func printPreview(w io.Writer, p *project.InitResult) {
	switch p.Status {
	case "unchanged":
		fmt.Fprintf(w, "already initialized: project %q (project_revision %d); nothing changed\nnext: %s\n", p.Name, p.ProjectRevision, p.Next)
		return
	case "initialized":
		if p.Next == "awr status" && len(p.Writes) == 0 {
			fmt.Fprintf(w, "already initialized: project %q (project_revision %d); nothing to write\n", p.Name, p.ProjectRevision)
		} else {
			fmt.Fprintf(w, "initialized project %q: %s indexed (project_revision %d)\n", p.Name, plural(len(p.Mapping), "source"), p.ProjectRevision)
		}
	case "updated":
		files := 0
		for _, wr := range p.Writes {
			if wr.Path != ".awr/awr.db" && !strings.HasPrefix(wr.Action, "keep") {
				files++
			}
		}
		fmt.Fprintf(w, "updated project %q: %s written and indexed (project_revision %d)\n", p.Name, plural(files, "file"), p.ProjectRevision)
	case "conflict":
		fmt.Fprintf(w, "conflict: nothing was written. %s already maps the sources otherwise, and init never rewrites it:\nedit it (sources, status_map, field_map), then index what changed with awr source reindex.\n", ".awr/project.toml")
	default:
		fmt.Fprintf(w, "preview: nothing was written. awr would initialize %s as project %q.\n", p.Project, p.Name)
	}
	tw := newTable(w)
	if len(p.Mapping) > 0 {
		fmt.Fprintln(tw, "\nsources:")
		for _, s := range p.Mapping {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Path, s.Adapter, s.Role)
		}
	}
	for _, a := range p.Ambiguous {
		fmt.Fprintf(tw, "\nambiguous %s: %s (choose with --source)\n", a.Role, strings.Join(a.Candidates, ", "))
	}
	if p.Status == "preview" {
		printNotIndexed(tw, p)
	}
	if p.Status == "updated" && len(p.Writes) > 0 {
		fmt.Fprintln(tw, "\nwrote:")
		for _, wr := range p.Writes {
			fmt.Fprintf(tw, "  %s\t%s\n", wr.Path, wr.Action)
		}
	}
	if (p.Status == "preview" || p.Status == "conflict") && len(p.Writes) > 0 {
		fmt.Fprintln(tw, "\nwould write:")
		for _, wr := range p.Writes {
			fmt.Fprintf(tw, "  %s\t%s\n", wr.Path, wr.Action)
		}
	}
	tw.Flush()
	printOrganization(w, p.Organization, 8)
	if p.Status == "preview" {
		fmt.Fprintf(w, "\nto accept: %s\n", p.Accept)
	} else {
		fmt.Fprintf(w, "\nnext: %s\n", p.Next)
	}
}

func printOrganization(w io.Writer, org project.Organization, maxGaps int) {
	fmt.Fprintf(w, "\norganization: %s\n", org.State)
	for i, g := range org.Gaps {
		if i == maxGaps {
			fmt.Fprintf(w, "  … %d more gaps (awr intake inspect --json)\n", len(org.Gaps)-maxGaps)
			break
		}
		loc := ""
		if g.Source != nil && g.Source.Path != "" {
			loc = g.Source.Path
			if g.Source.LineStart > 0 {
				loc = fmt.Sprintf("%s:%d", g.Source.Path, g.Source.LineStart)
			}
			loc = "  " + loc
		}
		fmt.Fprintf(w, "  gap %-20s %s%s\n", g.Code, project.SafeLine(g.Message), project.SafeLine(loc))
	}
	if len(org.ExecutableWork) > 0 {
		fmt.Fprintf(w, "  executable work: %s\n", project.SafeLine(strings.Join(org.ExecutableWork, ", ")))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// printNotIndexed lists the files init found and will not index: the
// adapter that would read each, how many items it holds, why it is left
// out and the command that would include it.
func printNotIndexed(w io.Writer, p *project.InitResult) {
	header := false
	for _, c := range p.Inventory.All() {
		if c.Indexed {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nnot indexed:")
			header = true
		}
		items := ""
		if c.Kind == "task_register" {
			items = plural(c.Items, "item")
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s; include it: %s\n", c.Path, c.Adapter, items, c.Why, c.Include)
	}
}
