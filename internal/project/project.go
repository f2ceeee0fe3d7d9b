package project

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/headmemo"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/projections"
)

// Options configures Open. The zero value is the real clock, fresh
// entropy and the store's defaults.
type Options struct {
	// Now is the clock every operation reads; time.Now when nil.
	Now func() time.Time
	// Entropy feeds event ids; a monotonic crypto/rand source when nil.
	Entropy io.Reader
	// LockTimeout bounds how long a write waits for a busy project
	// database; 0 waits as long as the context allows.
	LockTimeout time.Duration
	// Progress, if set, returns a progress callback for a long step
	// (rebuilding projections, verifying, replaying) described by desc.
	Progress func(desc string) func(done, total int64)
	// Version is awr's version, recorded by init.
	Version string
	// PoolSize is the number of database connections; the store's
	// default when zero. One connection keeps its page cache across a
	// long run of writes (bench generate).
	PoolSize int
	// Rig configures the seats' launcher (tmux) for the rig operations.
	Rig RigOptions
	// OnAgentsWord marks a front end that acts on an agent's word (the
	// MCP server): through it the door runs no command it is given.
	// Evidence with a command must then carry the exit code the caller
	// observed, and is recorded as reported (EvidenceAdd).
	OnAgentsWord bool
	// Confined holds every path a request names inside the project
	// (pathcheck.Inside), symbolic links followed: the MCP server sets
	// it, so that an agent's call reads and writes nothing outside.
	Confined bool
	// OneCommand marks a process that runs one command and exits (awr's
	// CLI): a shared store's first catch-up takes the head its open read
	// in place of a query of its own (pgstore.Options.HeadAtOpen). A
	// front end that serves many operations must leave it unset.
	OneCommand bool
	// HoldStore lets a process that runs one command (OneCommand) start
	// this user's connection holder for a shared store in the background
	// when none runs (internal/storehold): for a command a person typed,
	// never one that acts on a host's or an agent's word (a hook), which
	// starts no process. With OneCommand alone, a shared store's
	// connections go through a holder that runs, and directly otherwise.
	HoldStore bool
	// Lean opens the project's log with bounded memory (events.Options.Lean),
	// for a long-lived front end that reads all over the log (awr ui).
	Lean bool
}

// Project is an open project: its directory and, opened on first use, its
// event log. It is the one door every front end (CLI, MCP server, bench,
// demo) goes through: one method per operation, each taking the
// operation's request type. It is safe for concurrent use.
type Project struct {
	dir  string
	opts Options
	// within is the directory the project was looked for from when it
	// was found above it (as git finds .git); "" when the directory was
	// named or is the working directory itself.
	within string

	mu    sync.Mutex
	store *events.Store
	env   *commands.Env
	// cacheAtOpen is, for a team checkout, the cache's head when this
	// process opened it, before any catch-up (awr doctor's cache lag);
	// -1 until then.
	cacheAtOpen int64
	// memo keeps what reads of the head computed, for the next read of
	// the same head (headmemo.Memo).
	memo headmemo.Memo
}

// Open returns the project rooted at dir (made absolute); with dir "" it
// finds the project as git finds its repository: the nearest directory,
// from the working directory up, that holds one (Find), else the working
// directory itself. It does not touch the event log: the log is opened by
// the first operation that needs it, so a project can be inspected and
// initialized through the same door before it has a log. It is the only
// constructor of a Project.
// Errors: InvalidInput when dir cannot be made absolute.
func Open(ctx context.Context, dir string, opts Options) (*Project, error) {
	within := ""
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fault.Wrap(fault.Storage, err, "find project directory")
		}
		dir = wd
		if found := Find(wd); found != "" && found != wd {
			dir, within = found, wd
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, err, "--project %s", dir)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	return &Project{dir: abs, opts: opts, within: within}, nil
}

// fromWorkingDir returns a relative path the user gave as the project
// sees it: relative to the working directory when the project was found
// above it (`cd proj/docs && awr source add todo.md` adds docs/todo.md).
func (p *Project) fromWorkingDir(path string) string {
	if p.within == "" || path == "" || filepath.IsAbs(path) {
		return path
	}
	if rel, err := filepath.Rel(p.dir, filepath.Join(p.within, path)); err == nil {
		return rel
	}
	return path
}

// Find returns the nearest directory from dir up that holds an awr
// project (.awr/ with its log or its manifest), or "" when none does.
func Find(dir string) string {
	if dir == "" {
		return ""
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		for _, f := range []string{events.DBPath(d), intake.ManifestPath(d)} {
			if _, err := os.Stat(f); err == nil {
				return d
			}
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// Dir returns the project's absolute directory.
func (p *Project) Dir() string { return p.dir }

// Now returns the project's clock reading.
func (p *Project) Now() time.Time { return p.opts.Now() }

// Close closes the event log if it was opened. Closing twice is a no-op.
func (p *Project) Close() error { return p.end((*events.Store).Close) }

// Leave ends the project for a process about to exit (events.Store.Leave):
// a store this process only read is left for the exit to release.
func (p *Project) Leave() error { return p.end((*events.Store).Leave) }

// end ends the event log, if it was opened, with how.
func (p *Project) end(how func(*events.Store) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.store == nil {
		return nil
	}
	err := how(p.store)
	p.store, p.env = nil, nil
	return err
}

// EventLog returns the project's event log, opening it on first use, for
// the layers that measure or replay it whole: the lab behind its own door
// (internal/lab), and tests. No front end may get at it
// (TestFrontEndTypes in cmd/awr).
// Errors: NotFound (hint `awr init`) when the project has no log; Storage.
func (p *Project) EventLog(ctx context.Context) (*events.Store, error) {
	st, _, err := p.open(ctx, false)
	return st, err
}

// Env returns the command environment (log, clock, entropy, policy) of
// the project, opening the log on first use, for layers that append
// through the command code directly (the lab's demo, tests); no front end
// may get at it (TestFrontEndTypes in cmd/awr). The policy is read
// from the manifest's [continuity] table at each call, so a long-lived
// front end (the MCP server) follows an edited manifest; without a
// manifest it is commands.DefaultPolicy.
// Errors: those of opening the log; InvalidInput for a manifest that does
// not read.
func (p *Project) Env(ctx context.Context) (*commands.Env, error) {
	_, env, err := p.open(ctx, false)
	if err != nil {
		return nil, err
	}
	m, err := p.memo.Manifest(p.dir)
	if err != nil {
		return nil, err
	}
	cp := *env
	cp.Policy = m.Policy()
	return &cp, nil
}

// open opens (with create, creates) the event log once: read-only when
// this process may not write it (events.Writable).
func (p *Project) open(ctx context.Context, create bool) (*events.Store, *commands.Env, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.store != nil {
		return p.store, p.env, nil
	}
	var progress func(done, total int64)
	if p.opts.Progress != nil {
		progress = p.opts.Progress("rebuilding projections")
	}
	shared, manifestErr := p.shared()
	if manifestErr != nil {
		if env := os.Getenv(EnvStore); env != "" {
			if err := intake.CheckStoreURL(EnvStore, env); err != nil {
				// AWR_STORE is wrong, not the manifest.
				return nil, nil, err
			}
		}
		if _, err := os.Stat(events.DBPath(p.dir)); err != nil {
			return nil, nil, manifestErr
		}
		// A log of its own still opens for what needs no manifest
		// (status, log, verify); settle refuses a cache.
	}
	var st *events.Store
	var err error
	if shared != nil {
		st, err = p.openShared(ctx, shared, progress)
	} else {
		// A process that may not write the database still reads it:
		// the store then refuses every write with Storage.
		path := events.DBPath(p.dir)
		st, err = events.Open(ctx, path, events.Options{Create: create, ReadOnly: !create && !events.Writable(path), Projectors: projections.Projectors(),
			Progress: progress, LockTimeout: p.opts.LockTimeout, PoolSize: p.opts.PoolSize, Lean: p.opts.Lean})
	}
	if err != nil {
		return nil, nil, err
	}
	p.cacheAtOpen = -1
	if st.Upstream() != nil {
		if h, err := st.LocalHead(ctx); err == nil {
			p.cacheAtOpen = h.Revision
		}
	}
	if !create {
		if err := p.settle(ctx, st, manifestErr); err != nil {
			st.Close()
			return nil, nil, err
		}
	}
	env := p.envFor(st)
	p.store, p.env = st, env
	return st, env, nil
}

// exists reports whether the project has an event log: on disk, or in
// the shared store its manifest names.
func (p *Project) exists() bool {
	if _, err := os.Stat(events.DBPath(p.dir)); err == nil {
		return true
	}
	s, err := p.shared()
	return err == nil && s != nil
}

// progress returns the progress callback for desc, or nil.
func (p *Project) progress(desc string) func(done, total int64) {
	if p.opts.Progress == nil {
		return nil
	}
	return p.opts.Progress(desc)
}

// StaleSources returns the manifest sources whose files changed (or
// vanished) since they were indexed, the check before a write (a claim, a
// start, a resume): what it hashed anew is kept in this checkout's cache.
// A project without a manifest has none.
func (p *Project) StaleSources(ctx context.Context) ([]string, error) {
	stale, _, err := p.sourceFreshness(ctx, true)
	return stale, err
}

// sourceFreshness lists the sources that are not as indexed, and among
// them those that cannot be read at all (in the manifest, not on disk).
// It reads this checkout's cache of the sources it hashed before
// (intake.Seen); keep (a write's check) saves what it hashed anew there,
// a read writes nothing.
func (p *Project) sourceFreshness(ctx context.Context, keep bool) (stale, missing []string, err error) {
	m, ok, err := intake.ReadManifest(p.dir)
	if err != nil || !ok {
		return nil, nil, err
	}
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, nil, err
	}
	var indexed []projections.Source
	// Before a write (events.PlanReads) this reads a shared log's cache
	// as it is: the write refuses, under the lock, when a source was
	// indexed after the read.
	if err := st.ReadForWrite(ctx, false, sourceEvent, func(r *events.Reader) (err error) {
		indexed, err = projections.SourcesAt(r.Conn, r.Head, true)
		return err
	}); err != nil {
		return nil, nil, err
	}
	// The files are read and hashed outside the log's snapshot.
	seen := intake.LoadSeen(p.dir)
	for _, s := range intake.CompareSeen(p.dir, m, indexed, seen) {
		if s.Freshness != intake.Fresh {
			stale = append(stale, s.Path)
		}
		if s.Freshness == intake.Missing {
			missing = append(missing, s.Path)
		}
	}
	if keep {
		seen.Save(p.dir) // a cache: a checkout that cannot write it hashes again next time
	}
	sort.Strings(stale)
	sort.Strings(missing)
	return stale, missing, nil
}

// sourceEvent says whether e may change what sourceFreshness reads: an
// indexing of a source (stream "source/<path>").
func sourceEvent(e *events.Event) bool { return strings.HasPrefix(e.Stream, "source/") }

// requireFresh fails with SourceStale naming the changed files. A source
// that cannot be read is named as missing, with a hint that does not
// send the reader to a reindex, which cannot read it either.
func (p *Project) requireFresh(ctx context.Context, op string) error {
	stale, missing, err := p.sourceFreshness(ctx, true)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return missingSources(op, missing)
	}
	if len(stale) > 0 {
		return commands.StaleError(op, stale)
	}
	return nil
}

// missingSources is the SourceStale error of sources the manifest names
// that are not on disk.
func missingSources(op string, missing []string) error {
	return fault.New(fault.SourceStale, "%s: sources unavailable: %s: in the manifest, not on disk (restore them, or take them out of .awr/project.toml)", op, strings.Join(missing, ", ")).
		With("sources", missing).With("missing", true).WithHint("awr source list")
}

// read runs fn on a snapshot of the log with the read's revision resolved:
// rev is the revision to answer at, now the clock a reader there sees.
func (p *Project) read(ctx context.Context, at commands.Read, fn func(r *events.Reader, rev, now int64) error) error {
	st, err := p.EventLog(ctx)
	if err != nil {
		return err
	}
	return st.Read(ctx, func(r *events.Reader) error {
		rev, now, err := at.Resolve(r, p.opts.Now().UnixMilli())
		if err != nil {
			return err
		}
		return fn(r, rev, now)
	})
}

// readResult is read for an answer that fill builds from the snapshot:
// the answer, or nil and the error of the read or of fill.
func readResult[Res any](ctx context.Context, p *Project, at commands.Read, fill func(r *events.Reader, rev, now int64) (*Res, error)) (*Res, error) {
	var res *Res
	if err := p.read(ctx, at, func(r *events.Reader, rev, now int64) (err error) {
		res, err = fill(r, rev, now)
		return err
	}); err != nil {
		return nil, err
	}
	return res, nil
}

// command runs one command of the commands package on the project's
// environment, opening the log on first use.
func command[Req, Res any](ctx context.Context, p *Project, fn func(context.Context, *commands.Env, Req) (*Res, error), req Req) (*Res, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	return fn(ctx, env, req)
}
