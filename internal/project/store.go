package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/storehold"
	"github.com/awr-dev/awr/projections"
)

// EnvStore is the environment variable that gives the shared store's URL:
// the default of `awr init --store`, and, for a project whose manifest
// has a [store] table, the URL this machine reaches it by (a tunnel, a
// replica's address) in place of the manifest's. A project without a
// [store] table ignores it: its log is its SQLite file.
const EnvStore = "AWR_STORE"

// StoreStatus is where a project's log lives, as status reports it.
type StoreStatus struct {
	// Kind is "sqlite" (the embedded file, the default) or "postgres" (a
	// shared log, cached in the file).
	Kind string `json:"kind"`
	// Shared names the shared log, without credentials ("postgres
	// HOST:PORT/DB as USER, project KEY"); absent for sqlite.
	Shared string `json:"shared,omitempty"`
	// Path is the SQLite file: the log, or this machine's cache of the
	// shared log.
	Path string `json:"path"`
}

// sharedStore is the shared log a project's manifest names.
type sharedStore struct {
	url, key string
	// retryFor is how long a passing failure of the server is retried
	// (the project's --timeout).
	retryFor time.Duration
	// headAtOpen: the process runs one command (Options.OneCommand).
	headAtOpen bool
	// from says where url came from, for the errors of a store that
	// cannot be reached or refuses: AWR_STORE, or the manifest.
	from string
	// hold: connect through this user's connection holder for the
	// store when one runs (a process that runs one command); start: and
	// start one when there is none (Options.HoldStore).
	hold, start bool
}

// fromManifest is where the store's URL comes from when AWR_STORE is unset.
const fromManifest = "the manifest's [store] url"

// shared returns the shared store the manifest's [store] table names, with
// AWR_STORE in place of its URL when set, or nil for a project whose log
// is its SQLite file.
// Errors: InvalidInput for a manifest that does not read, or an AWR_STORE
// that is not a postgres:// URL without a password.
func (p *Project) shared() (*sharedStore, error) {
	m, ok, err := intake.ReadManifest(p.dir)
	if err != nil || !ok || m.Store == nil {
		return nil, err
	}
	s := &sharedStore{url: m.Store.URL, key: m.StoreKey(), retryFor: p.opts.LockTimeout, headAtOpen: p.opts.OneCommand, from: fromManifest, hold: p.opts.OneCommand, start: p.opts.HoldStore}
	if env := os.Getenv(EnvStore); env != "" {
		if err := intake.CheckStoreURL(EnvStore, env); err != nil {
			return nil, err
		}
		s.url, s.from = env, EnvStore
	}
	return s, nil
}

// openUpstream connects to the shared log.
// Errors: those of pgstore.Open, with details.from saying where the URL
// came from (AWR_STORE or the manifest); a server that refused the
// connection (a wrong password, an unknown user or database) also says it
// in the message, so that the URL to fix is the one named.
func (s *sharedStore) openUpstream(ctx context.Context) (events.Upstream, error) {
	dir, via := "", ""
	if s.hold {
		dir = storehold.Dir(s.url)
	}
	if dir != "" && storehold.Private(dir) {
		via = dir
	}
	up, err := pgstore.Open(ctx, s.url, pgstore.Options{Project: s.key, RetryFor: s.retryFor, ServerClock: true, HeadAtOpen: s.headAtOpen, Via: via, IdleLimit: pgstore.DefaultIdleLimit})
	if err == nil {
		if s.start && dir != "" && !up.Held() {
			// No holder yet: this command connected itself; the next
			// ones go through the one started now. Starting it is
			// best effort: without it every command connects itself.
			if exe, err := os.Executable(); err == nil {
				storehold.Start(exe, s.url, dir)
			}
		}
		return up, nil
	}
	fe := fault.As(err)
	if fe == nil || fe.Code != fault.Storage {
		return nil, err
	}
	fe = fe.With("from", s.from)
	if state, _ := fe.Details["sqlstate"].(string); state == "3D000" || strings.HasPrefix(state, "28") {
		fe.Message += fmt.Sprintf(" (the URL came from %s)", s.from)
	}
	return nil, fe
}

// openShared opens this machine's cache of the shared log (.awr/awr.db),
// creating it when this checkout has none yet (joining: the first read
// catches it up from the shared log).
// Errors: NotFound (hint `awr init --store URL --accept`) when the shared
// log holds no event for the project; Storage when the shared log cannot
// be reached (naming it, with a pg_isready hint) or the cache cannot be
// written; those of events.Open.
func (p *Project) openShared(ctx context.Context, s *sharedStore, progress func(done, total int64)) (*events.Store, error) {
	path := events.DBPath(p.dir)
	up, err := s.openUpstream(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		h, err := up.Head(ctx)
		if err != nil {
			up.Close()
			return nil, err
		}
		if h.Revision == 0 {
			up.Close()
			return nil, fault.New(fault.NotFound, "open project: the shared store (%s) holds no event for this project yet", up.Describe()).
				With("store", up.Describe()).WithHint("awr init --store %s --accept", s.url)
		}
		// Joining: the log to be cached must be this project's. (A cache
		// already here is checked against the shared log at every read.)
		if err := sharedIdentity(ctx, p.dir, up); err != nil {
			up.Close()
			return nil, err
		}
	} else if !events.Writable(path) {
		up.Close()
		return nil, fault.New(fault.Storage, "open project: this machine's cache %s of the shared store (%s) is not writable: every command catches it up", path, up.Describe()).
			With("path", path)
	}
	st, err := events.Open(ctx, path, events.Options{Create: true, Upstream: up, Projectors: projections.Projectors(),
		Progress: progress, LockTimeout: p.opts.LockTimeout, PoolSize: p.opts.PoolSize})
	if err != nil {
		up.Close()
		return nil, err
	}
	return st, nil
}

// sharedIdentity refuses, before anything is cached, a shared log whose
// project is not the one this checkout recorded (.awr/project-id): the
// manifest's URL, or AWR_STORE in its place, names a database where the
// key holds another project's log. A checkout without that file (one
// that joined by its manifest alone) is not checked.
// Errors: Storage naming both ids and where the URL came from.
func sharedIdentity(ctx context.Context, dir string, up events.Upstream) error {
	want := intake.RecordedProjectID(dir)
	if want == "" {
		return nil
	}
	var id, name string
	err := up.Scan(ctx, 1, 1, func(e *events.Event) error {
		if v, err := events.Decode(e); err == nil {
			if pi, ok := v.(*events.ProjectInitialized); ok {
				id, name = pi.ProjectID, pi.Name
			}
		}
		return nil
	})
	if err != nil || id == "" || id == want {
		return err
	}
	from := fromManifest
	if os.Getenv(EnvStore) != "" {
		from = EnvStore
	}
	return fault.New(fault.Storage, "open project: the shared store %s holds the log of project %s (%q), but %s says this is project %s: %s names another project's database; nothing was written", up.Describe(), id, name, intake.ProjectIDPath(dir), want, from).
		With("store", up.Describe()).With("project_id", id).With("recorded_project_id", want).With("from", from)
}

// strayCache is the refusal of a cache of a shared log opened as a
// project's own log: its manifest names no shared store (or does not
// read, manifestErr), and a write to the file alone would leave the
// shared log behind.
func strayCache(path string, mark *events.SharedMark, manifestErr error) error {
	if manifestErr != nil {
		return fault.Wrap(fault.InvalidInput, manifestErr, "open project: %s is this machine's cache of the shared store (%s), and the manifest that says so does not read: fix .awr/project.toml (or restore it: git checkout .awr/project.toml), then run the command again", path, mark.Store).
			With("path", path)
	}
	return fault.New(fault.InvalidInput, "open project: %s is this machine's cache of the shared store (%s), but .awr/project.toml has no [store] table: a write here would leave the shared log behind; nothing was written; restore the manifest's [store] table (git checkout .awr/project.toml), then run the command again", path, mark.Store).
		With("path", path).With("store", mark.Store)
}

// storeStatus is where the log of the project on st lives.
func (p *Project) storeStatus(st *events.Store) *StoreStatus {
	rel, err := filepath.Rel(p.dir, st.Path())
	if err != nil {
		rel = st.Path()
	}
	if up := st.Upstream(); up != nil {
		return &StoreStatus{Kind: "postgres", Shared: up.Describe(), Path: rel}
	}
	return &StoreStatus{Kind: "sqlite", Path: rel}
}

// HoldStore runs this user's connection holder for the shared store at
// url (package storehold) until it has had no client for a while: the
// process `awr` starts in the background for the commands of a project on
// a shared store (Options.HoldStore). It returns nil at once when another
// holder serves the store already. Errors: the URL does not parse, the
// holder's directory is not the user's alone, the store cannot be
// reached.
func HoldStore(ctx context.Context, url string) error {
	dir := storehold.Dir(url)
	if dir == "" {
		return nil
	}
	if err := storehold.Serve(ctx, url, dir, storehold.Options{}); err != nil {
		return fault.Wrap(fault.Storage, err, "%s", err.Error())
	}
	return nil
}
