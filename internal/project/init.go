package project

import (
	"context"
	"fmt"
	"os"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/sharedstore"
)

// InitRequest is `awr init`.
type InitRequest struct {
	Name      string   `name:"name" json:"name,omitempty" help:"Project name (default: the directory name)." placeholder:"NAME"`
	Accept    bool     `name:"accept" json:"accept,omitempty" help:"Apply exactly what the preview shows."`
	Goal      string   `name:"goal" json:"goal,omitempty" help:"For a project with no goal: propose .awr/intake/GOALS.md with this goal and an intake task INTAKE-001." placeholder:"TEXT"`
	Source    []string `name:"source" sep:"none" json:"source,omitempty" help:"Index this file (repeatable); settles which candidate to use when discovery finds several." placeholder:"PATH"`
	StatusMap []string `name:"status-map" sep:"none" json:"status_map,omitempty" help:"Map a register's status word to a canonical status (repeatable)." placeholder:"SRC=CANON"`
	FieldMap  []string `name:"field-map" sep:"none" json:"field_map,omitempty" help:"Map a canonical field to the register's own column or key (repeatable)." placeholder:"CANON=SRC"`
	Store     string   `name:"store" json:"store,omitempty" help:"Put the project's log in a shared PostgreSQL database, for a team's machines (the manifest's [store] table; the password comes from ~/.pgpass or PGPASSWORD, never the URL). Default: $AWR_STORE, else the embedded SQLite file .awr/awr.db." placeholder:"postgres://USER@HOST:PORT/DB"`
	// Fingerprint is what the preview of a change to an initialized
	// project's maps printed (intake.Preview.Fingerprint).
	Fingerprint string `name:"fingerprint" json:"fingerprint,omitempty" help:"With --status-map or --field-map on an initialized project: the fingerprint of .awr/project.toml the preview printed; --accept refuses with SourceStale if the manifest changed since." placeholder:"FP"`
}

// InitResult is the preview of `awr init`, or with Accept what was done.
type InitResult = intake.Preview

// Init previews, and with Accept applies, the project's initialization:
// the manifest mapping its own task files, the event log, and the first
// index of every source. A project whose log exists keeps the name and id
// it was created with.
// Errors: InvalidTransition in a directory inside another project found
// from the working directory (name the directory with --project to nest
// one); InvalidInput when the directory does not exist; Usage for a
// malformed map; SourceConflict for ambiguous candidates or a manifest
// that differs otherwise than by gaining the intake files; those of the
// log. On an initialized project --goal sets or updates the goal (G-1 of
// .awr/intake/GOALS.md, indexed in the same call): the same goal again
// changes nothing; --status-map and --field-map change the maps of its
// manifest's sources (a preview, then an accept with the fingerprint it
// printed: SourceStale when the manifest changed since) and index them
// again under the new maps.
func (p *Project) Init(ctx context.Context, req InitRequest) (*InitResult, error) {
	dir := p.dir
	opts, from, err := p.initOptions(req)
	if err != nil {
		return nil, err
	}
	existing, interrupted, err := p.existingProject(ctx, &opts)
	if err != nil {
		return nil, err
	}
	plan, err := intake.Plan(dir, opts)
	if err != nil {
		return nil, err
	}
	if plan.Store != nil {
		shared := &sharedstore.Store{URL: plan.Store.URL, Key: plan.Store.Project, From: from}
		if shared.Key == "" {
			shared.Key = plan.Name
		}
		plan.OpenUpstream = shared.Open
	}
	if interrupted {
		plan.Writes = append(plan.Writes, intake.Write{Path: ".awr/awr.db", Action: fmt.Sprintf("finish: the log an interrupted init left has no event; add project_initialized and %d source_indexed", len(plan.Mapping))})
	}
	ask := intake.Ask{Accept: req.Accept, Fingerprint: req.Fingerprint, Initialized: existing != nil}
	if existing != nil {
		ask.Revision, ask.ID = existing.ProjectRevision, existing.ProjectID
	}
	answered, err := plan.Answer(dir, ask)
	if err != nil {
		return nil, err
	}
	if answered {
		return plan, nil
	}
	return p.acceptInit(ctx, req, plan, existing)
}

// initOptions checks the directory, the maps and the store of an init
// and returns the intake's options, and where the store's URL came from
// (--store, AWR_STORE, or an existing manifest); an init inside another
// project is refused.
func (p *Project) initOptions(req InitRequest) (opts intake.InitOptions, from string, err error) {
	dir := p.dir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return intake.InitOptions{}, "", fault.New(fault.InvalidInput, "init: --project %s is not a directory", dir).With("path", dir)
	}
	sm, err := intake.Pairs("--status-map", req.StatusMap)
	if err != nil {
		return intake.InitOptions{}, "", err
	}
	fm, err := intake.Pairs("--field-map", req.FieldMap)
	if err != nil {
		return intake.InitOptions{}, "", err
	}
	if p.within != "" {
		// Found above the working directory: initializing here would
		// make a second project nested in the first.
		return intake.InitOptions{}, "", fault.New(fault.InvalidTransition, "init: %s is inside the awr project at %s; a project nested in it is made only by naming its directory (awr init --project %s)", p.within, dir, p.within).
			With("project", dir).With("path", p.within).WithHint("awr status")
	}
	store, where := req.Store, "--store"
	if store == "" {
		where = fromManifest
	}
	if store == "" && !p.exists() {
		// The environment's store is the default of a new project only.
		store, where = os.Getenv(EnvStore), EnvStore
	}
	if store != "" {
		if err := intake.CheckStoreURL(where, store); err != nil {
			return intake.InitOptions{}, "", err
		}
	}
	return intake.InitOptions{Name: req.Name, Goal: req.Goal, Sources: req.Source, StatusMap: sm, FieldMap: fm, Version: p.opts.Version, Store: store}, where, nil
}

// existingProject reads the status of a project already initialized
// (nil for a new one), whose name opts keeps unless another is given;
// interrupted says its log has no event (an init was interrupted, and
// this one finishes it).
func (p *Project) existingProject(ctx context.Context, opts *intake.InitOptions) (existing *StatusResult, interrupted bool, err error) {
	if !p.exists() {
		return nil, false, nil
	}
	existing, err = p.Status(ctx, StatusRequest{})
	switch {
	case fault.Is(err, fault.NotFound) && p.exists():
		return nil, true, nil
	case err != nil:
		return nil, false, err
	}
	if opts.Name == "" && existing.ProjectName != "" {
		opts.Name = existing.ProjectName
	}
	return existing, false, nil
}

// acceptInit writes what plan says, under the directory's lock (and the
// manifest's, on an initialized project): refused on a replica, or once
// interrupted.
func (p *Project) acceptInit(ctx context.Context, req InitRequest, plan *InitResult, existing *StatusResult) (*InitResult, error) {
	dir := p.dir
	if existing != nil && existing.Origin != nil && commands.IsReplica(existing.Origin, existing.Fork) && (req.Goal != "" || len(plan.Mapping) > 0) {
		// Indexing or setting the goal appends, which a replica refuses:
		// refused before the first file changes.
		return nil, events.ReplicaError(existing.Origin)
	}
	if ctx.Err() != nil {
		return nil, intake.Interrupted("init", plan.Accept)
	}
	unlock, err := pathcheck.LockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if existing != nil {
		// The manifest may gain the intake files: serialized with
		// source add, so neither loses the other's entry.
		unlockManifest, err := p.lockManifest()
		if err != nil {
			return nil, err
		}
		defer unlockManifest()
	}
	res, err := intake.Accept(ctx, plan, func(create bool) (*events.Store, error) {
		// Opening is not cancelled: Accept opens the log it has just
		// committed, and a cancel must not turn that into a failure.
		st, _, err := p.open(context.WithoutCancel(ctx), create)
		return st, err
	}, p.envFor)
	if err != nil {
		// A failed accept removes what it created; forget the log it
		// opened so a later call opens it afresh.
		p.Close()
		return nil, err
	}
	if res.Status == "updated" {
		// What the log now holds decides what comes next (a claim on the
		// intake work, other sources), not the preview.
		in, err := p.IntakeInspect(ctx, IntakeInspectRequest{})
		if err != nil {
			return nil, err
		}
		res.Organization, res.Next = in.Organization, in.NextAction
	}
	return res, nil
}

// envFor is the command environment of the project on st: the project's
// clock and entropy.
func (p *Project) envFor(st *events.Store) *commands.Env {
	env := commands.NewEnv(st)
	env.Now = p.opts.Now
	if p.opts.Entropy != nil {
		env.Entropy = p.opts.Entropy
	}
	return env
}

// settle checks a log just opened for use: one with no event is what an
// init interrupted before its commit left (by an older awr, or made by
// hand), not a project; in one with events, the files its init staged and
// had not yet published are published.
// Errors: NotFound (hint `awr init --accept`) for a log with no event;
// Storage.
func (p *Project) settle(ctx context.Context, st *events.Store, manifestErr error) error {
	// One read gives the head, the project the log belongs to and, for a
	// log of its own, whether the file is in fact a shared log's cache.
	// A shared log's cache that holds events answers alone (the project
	// a log belongs to never changes): the command's own read catches it
	// up, with the head the store's open read (one round trip less). An
	// empty cache (a checkout joining) catches up first.
	var head int64
	var id, name string
	var mark *events.SharedMark
	read := func(r *events.Reader) error {
		head = r.Head
		var err error
		if id, name, err = intake.ProjectOn(r.Conn); err != nil {
			return err
		}
		if st.Upstream() == nil {
			mark, err = events.SharedOf(r.Conn)
		}
		return err
	}
	if err := st.ReadCached(ctx, read); err != nil {
		return err
	}
	if head == 0 && st.Upstream() != nil {
		if err := st.Read(ctx, read); err != nil {
			return err
		}
	}
	if mark != nil {
		return strayCache(st.Path(), mark, manifestErr)
	}
	if head == 0 {
		return fault.New(fault.NotFound, "open project: %s is not a project yet: the init that created its log was interrupted before the first event (.awr/awr.db has no event)", p.dir).
			With("path", events.DBPath(p.dir)).With("project_revision", 0).WithHint("awr init --accept")
	}
	// A reader that may not write the project leaves a publication cut
	// short for its owner to finish: a read never writes.
	if events.Writable(events.DBPath(p.dir)) {
		if err := intake.FinishInit(p.dir); err != nil {
			return err
		}
	}
	return intake.IDAgrees(p.dir, id, name, "open project")
}
