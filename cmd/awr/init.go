package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/queries"
)

type initCmd struct {
	Name   string `help:"Project name (default: the directory name)."`
	Accept bool   `help:"Apply what the preview shows."`
}

// initWrite is one file init creates.
type initWrite struct {
	Path   string `json:"path"`
	Action string `json:"action"`
}

// initResult is `awr init`.
type initResult struct {
	Status          string      `json:"status"`
	RequiresAccept  bool        `json:"requires_accept"`
	Project         string      `json:"project"`
	Name            string      `json:"name"`
	ProjectID       string      `json:"project_id,omitempty"`
	Writes          []initWrite `json:"writes"`
	ProjectRevision int64       `json:"project_revision"`
	Next            string      `json:"next"`
}

// Run previews or applies project initialization.
func (c *initCmd) Run(app *App) error {
	dir, err := app.projectDir()
	if err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fault.New(fault.InvalidInput, "init: --project %s is not a directory", dir).With("path", dir)
	}
	name := c.Name
	if name == "" {
		name = filepath.Base(dir)
	}
	db := events.DBPath(dir)
	_, statErr := os.Stat(db)
	exists := statErr == nil
	res := &initResult{Project: dir, Name: name, Writes: []initWrite{}}
	if !exists {
		res.Writes = append(res.Writes, initWrite{Path: ".awr/", Action: "create (mode 0700)"}, initWrite{Path: ".awr/awr.db", Action: "create (mode 0600): event log with project_initialized"})
	}
	if !c.Accept {
		res.Status, res.RequiresAccept = "preview", true
		res.Next = "awr init --accept"
		if exists {
			st, err := app.Store()
			if err != nil {
				return err
			}
			sum, err := queries.Status(app.Ctx, st, queries.Head(app.Now()))
			if err != nil {
				return err
			}
			res.Status, res.RequiresAccept, res.Next = "initialized", false, "awr status"
			res.Name, res.ProjectID, res.ProjectRevision = sum.ProjectName, sum.ProjectID, sum.ProjectRevision
		}
		return app.render(res, func(w io.Writer) { printInit(w, res) })
	}
	st, err := app.open(true)
	if err != nil {
		return err
	}
	env := commands.NewEnv(st)
	env.Now = app.Now
	out, err := commands.Init(app.Ctx, env, commands.InitRequest{Name: name, AWRVersion: Version()})
	if err != nil {
		return err
	}
	res.Status, res.ProjectID, res.ProjectRevision, res.Next = "initialized", out.ProjectID, out.ProjectRevision, "awr status"
	if out.AlreadyExisted {
		res.Status, res.Name = "unchanged", out.Name
	}
	return app.render(res, func(w io.Writer) { printInit(w, res) })
}

func printInit(w io.Writer, res *initResult) {
	switch res.Status {
	case "preview":
		fmt.Fprintf(w, "preview: awr would initialize %s as project %q and write:\n", res.Project, res.Name)
		for _, wr := range res.Writes {
			fmt.Fprintf(w, "  %-12s %s\n", wr.Path, wr.Action)
		}
		fmt.Fprintf(w, "nothing was written. next: %s\n", res.Next)
	case "initialized":
		if res.ProjectID != "" && res.Next == "awr status" && len(res.Writes) == 0 {
			fmt.Fprintf(w, "already initialized: project %q (project_revision %d)\nnext: %s\n", res.Name, res.ProjectRevision, res.Next)
			return
		}
		fmt.Fprintf(w, "initialized project %q at %s (project_revision %d)\nnext: %s\n", res.Name, res.Project, res.ProjectRevision, res.Next)
	case "unchanged":
		fmt.Fprintf(w, "already initialized: project %q (project_revision %d); nothing changed\n", res.Name, res.ProjectRevision)
	default:
		fmt.Fprintf(w, "initialized project %q at %s (project_revision %d)\nnext: %s\n", res.Name, res.Project, res.ProjectRevision, res.Next)
	}
}
