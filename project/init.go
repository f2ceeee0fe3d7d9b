package project

import (
	"context"
	"os"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/intake"
)

// InitRequest is `awr init`.
type InitRequest struct {
	Name      string   `name:"name" json:"name,omitempty" help:"Project name (default: the directory name)." placeholder:"NAME"`
	Accept    bool     `name:"accept" json:"accept,omitempty" help:"Apply exactly what the preview shows."`
	Goal      string   `name:"goal" json:"goal,omitempty" help:"For a project with no goal: propose .awr/intake/GOALS.md with this goal and an intake task INTAKE-001." placeholder:"TEXT"`
	Source    []string `name:"source" sep:"none" json:"source,omitempty" help:"Index this file (repeatable); settles which candidate to use when discovery finds several." placeholder:"PATH"`
	StatusMap []string `name:"status-map" sep:"none" json:"status_map,omitempty" help:"Map a register's status word to a canonical status (repeatable)." placeholder:"SRC=CANON"`
	FieldMap  []string `name:"field-map" sep:"none" json:"field_map,omitempty" help:"Map a canonical field to the register's own column or key (repeatable)." placeholder:"CANON=SRC"`
}

// InitResult is the preview of `awr init`, or with Accept what was done.
type InitResult = intake.Preview

// pairs parses KEY=VALUE flag values.
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

// Init previews, and with Accept applies, the project's initialization:
// the manifest mapping its own task files, the event log, and the first
// index of every source. A project whose log exists keeps the name and id
// it was created with.
// Errors: InvalidInput when the directory does not exist; Usage for a
// malformed map; SourceConflict for ambiguous candidates or a manifest
// that differs; those of the log.
func (p *Project) Init(ctx context.Context, req InitRequest) (*InitResult, error) {
	dir := p.dir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fault.New(fault.InvalidInput, "init: --project %s is not a directory", dir).With("path", dir).WithHint("mkdir -p %s", dir)
	}
	sm, err := pairs("--status-map", req.StatusMap)
	if err != nil {
		return nil, err
	}
	fm, err := pairs("--field-map", req.FieldMap)
	if err != nil {
		return nil, err
	}
	opts := intake.InitOptions{Name: req.Name, Goal: req.Goal, Sources: req.Source, StatusMap: sm, FieldMap: fm, Version: p.opts.Version}
	var existing *StatusResult
	if p.exists() {
		if existing, err = p.Status(ctx, StatusRequest{}); err != nil {
			return nil, err
		}
		if opts.Name == "" && existing.ProjectName != "" {
			opts.Name = existing.ProjectName
		}
	}
	plan, err := intake.Plan(dir, opts)
	if err != nil {
		return nil, err
	}
	if !req.Accept {
		plan.Status, plan.RequiresAccept, plan.Next = "preview", true, plan.Accept
		if existing != nil {
			plan.ProjectRevision, plan.ProjectID = existing.ProjectRevision, existing.ProjectID
			if len(plan.Writes) == 0 {
				plan.Status, plan.RequiresAccept, plan.Next = "initialized", false, "awr status"
			}
		}
		return plan, nil
	}
	res, err := intake.Accept(ctx, plan, func(create bool) (*events.Store, error) {
		st, _, err := p.open(ctx, create)
		return st, err
	}, func(*events.Store) *commands.Env {
		_, env, _ := p.open(ctx, false)
		return env
	})
	if err != nil {
		// A failed accept closes the log it opened (and removes what it
		// created); forget it so a later call opens it afresh.
		p.Close()
		return nil, err
	}
	return res, nil
}
