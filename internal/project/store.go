package project

import (
	"context"
	"errors"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/sharedstore"
	"github.com/awr-dev/awr/internal/statusview"
	"github.com/awr-dev/awr/projections"
)

// EnvStore is the environment variable that gives the shared store's URL:
// the default of `awr init --store`, and, for a project whose manifest
// has a [store] table, the URL this machine reaches it by (a tunnel, a
// replica's address) in place of the manifest's. A project without a
// [store] table ignores it: its log is its SQLite file.
const EnvStore = "AWR_STORE"

// StoreStatus is where a project's log lives, as status reports it.
type StoreStatus = statusview.Store

// fromManifest is where the store's URL comes from when AWR_STORE is unset.
const fromManifest = "the manifest's [store] url"

// storeFrom says where the shared store's URL comes from: AWR_STORE when
// set, else the manifest.
func storeFrom() string {
	if os.Getenv(EnvStore) != "" {
		return EnvStore
	}
	return fromManifest
}

// shared returns the shared store the manifest's [store] table names, with
// AWR_STORE in place of its URL when set, or nil for a project whose log
// is its SQLite file.
// Errors: InvalidInput for a manifest that does not read, or an AWR_STORE
// that is not a postgres:// URL without a password.
func (p *Project) shared() (*sharedstore.Store, error) {
	m, ok, err := intake.ReadManifest(p.dir)
	if err != nil || !ok || m.Store == nil {
		return nil, err
	}
	s := &sharedstore.Store{URL: m.Store.URL, Key: m.StoreKey(), RetryFor: p.opts.LockTimeout, HeadAtOpen: p.opts.OneCommand, From: fromManifest, Hold: p.opts.OneCommand, Start: p.opts.HoldStore}
	if env := os.Getenv(EnvStore); env != "" {
		if err := intake.CheckStoreURL(EnvStore, env); err != nil {
			return nil, err
		}
		s.URL, s.From = env, EnvStore
	}
	return s, nil
}

// openShared opens this machine's cache of the shared log (.awr/awr.db),
// creating it when this checkout has none yet (joining: the first read
// catches it up from the shared log).
// Errors: NotFound (hint `awr init --store URL --accept`) when the shared
// log holds no event for the project; Storage when the shared log cannot
// be reached (naming it, with a pg_isready hint) or the cache cannot be
// written; those of events.Open.
func (p *Project) openShared(ctx context.Context, s *sharedstore.Store, progress func(done, total int64)) (*events.Store, error) {
	path := events.DBPath(p.dir)
	up, err := s.Open(ctx)
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
				With("store", up.Describe()).WithHint("awr init --store %s --accept", s.URL)
		}
		// Joining: the log to be cached must be this project's. (A cache
		// already here is checked against the shared log at every read.)
		if err := intake.SharedIdentity(ctx, p.dir, up, storeFrom()); err != nil {
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
// url until it has had no client for a while: the process `awr` starts in
// the background for the commands of a project on a shared store
// (Options.HoldStore). See sharedstore.Hold.
func HoldStore(ctx context.Context, url string) error { return sharedstore.Hold(ctx, url) }
