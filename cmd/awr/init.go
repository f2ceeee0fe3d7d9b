package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/intake"
	"github.com/awr-dev/awr/queries"
)

type initCmd struct {
	Name      string   `help:"Project name (default: the directory name)."`
	Accept    bool     `help:"Apply exactly what the preview shows."`
	Goal      string   `help:"For a project with no goal: propose .awr/intake/GOALS.md with this goal and an intake task INTAKE-001." placeholder:"TEXT"`
	Source    []string `sep:"none" help:"Index this file (repeatable); settles which candidate to use when discovery finds several." placeholder:"PATH"`
	StatusMap []string `name:"status-map" sep:"none" help:"Map a register's status word to a canonical status (repeatable)." placeholder:"SRC=CANON"`
	FieldMap  []string `name:"field-map" sep:"none" help:"Map a canonical field to the register's own column or key (repeatable)." placeholder:"CANON=SRC"`
}

func pairs(flag string, vals []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(val) == "" {
			return nil, fault.New(fault.Usage, "%s %q: want KEY=VALUE", flag, v).With("flag", flag).WithHint("awr init --help")
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	return out, nil
}

// Run previews or applies project initialization.
func (c *initCmd) Run(app *App) error {
	dir, err := app.projectDir()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fault.New(fault.InvalidInput, "init: --project %s is not a directory", dir).With("path", dir).WithHint("mkdir -p %s", dir)
	}
	sm, err := pairs("--status-map", c.StatusMap)
	if err != nil {
		return err
	}
	fm, err := pairs("--field-map", c.FieldMap)
	if err != nil {
		return err
	}
	opts := intake.InitOptions{Name: c.Name, Goal: c.Goal, Sources: c.Source, StatusMap: sm, FieldMap: fm, Version: Version()}
	// A project whose log exists keeps the name and id it was created with.
	var existing *queries.StatusResult
	if _, err := os.Stat(events.DBPath(dir)); err == nil {
		st, err := app.Store()
		if err != nil {
			return err
		}
		if existing, err = queries.Status(app.Ctx, st, queries.Head(app.Now())); err != nil {
			return err
		}
		if opts.Name == "" && existing.ProjectName != "" {
			opts.Name = existing.ProjectName
		}
	}
	p, err := intake.Plan(dir, opts)
	if err != nil {
		return err
	}
	if !c.Accept {
		p.Status, p.RequiresAccept, p.Next = "preview", true, p.Accept
		if existing != nil {
			p.ProjectRevision, p.ProjectID = existing.ProjectRevision, existing.ProjectID
			if len(p.Writes) == 0 {
				p.Status, p.RequiresAccept, p.Next = "initialized", false, "awr status"
			}
		}
		return app.render(p, func(w io.Writer) { printPreview(w, p) })
	}
	res, err := intake.Accept(app.Ctx, p, app.open, func(st *events.Store) *commands.Env {
		env := commands.NewEnv(st)
		env.Now = app.Now
		return env
	})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) { printPreview(w, res) })
}

func printPreview(w io.Writer, p *intake.Preview) {
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
	default:
		fmt.Fprintf(w, "preview: nothing was written. awr would initialize %s as project %q.\n", p.Project, p.Name)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(p.Mapping) > 0 {
		fmt.Fprintln(tw, "\nsources:")
		for _, s := range p.Mapping {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Path, s.Adapter, s.Role)
		}
	}
	for _, a := range p.Ambiguous {
		fmt.Fprintf(tw, "\nambiguous %s: %s (choose with --source)\n", a.Role, strings.Join(a.Candidates, ", "))
	}
	if p.Status == "preview" && len(p.Writes) > 0 {
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

func printOrganization(w io.Writer, org intake.Organization, maxGaps int) {
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
		fmt.Fprintf(w, "  gap %-20s %s%s\n", g.Code, g.Message, loc)
	}
	if len(org.ExecutableWork) > 0 {
		fmt.Fprintf(w, "  executable work: %s\n", strings.Join(org.ExecutableWork, ", "))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
