// Package migrate moves a project's log between its embedded SQLite file
// and a shared PostgreSQL database (`awr migrate`), checked equal, with
// nothing appended meanwhile. The project door (internal/project) takes
// the directory and manifest locks and calls it; it holds the stores'
// side of the move (events.Store.Attach and Detach) to a project's
// manifest.
package migrate

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
)

// Result reports a migration, but for where the log now is (the door
// says that from the store it opens afterwards).
type Result struct {
	// Status is "migrated", or "unchanged" when the log was there already.
	Status          string
	From            string
	To              string
	ProjectRevision int64
	HeadHash        string
	// Copied is the number of events copied into PostgreSQL.
	Copied int64
	// Requests is the number of idempotency records carried over.
	Requests int64
	// Projections are the checksums found equal.
	Projections []replay.ProjectionChecksum
	Next        string
}

// Progress returns the progress callback of a long step named desc
// (copying, folding), or nil: the door's (project.Options.Progress).
type Progress func(desc string) func(done, total int64)

// of returns desc's callback, nil when there is none.
func (p Progress) of(desc string) func(done, total int64) {
	if p == nil {
		return nil
	}
	return p(desc)
}

// Project is what a migration needs of the project it moves: its
// directory, and its log as the manifest names it, opened on first use
// and closed to be opened anew once the manifest changed.
type Project interface {
	Dir() string
	EventLog(ctx context.Context) (*events.Store, error)
	Close() error
}

// ToShared copies a project's own SQLite log, whole, into PostgreSQL at
// url under key (the manifest's name when empty), checks the copy (the
// same head hash, and projections folded from the copy with the same
// checksums as the log's own), writes the manifest's [store] table and
// makes .awr/awr.db this machine's cache of it. The caller holds the
// project's directory and manifest locks and has closed its log.
//
// Errors: InvalidTransition for a log already in another shared store
// (hint awr migrate --to sqlite), or a replica; SourceConflict when the
// key already holds another log; VerifyFailed when the copy differs;
// Storage. progress draws the copy, and the check's fold, as they go.
func ToShared(ctx context.Context, p Project, m *intake.Manifest, url, key string, lockTimeout time.Duration, progress Progress) (*Result, error) {
	if key == "" {
		key = m.StoreKey()
	}
	dir := p.Dir()
	if m.Store != nil && m.Store.URL == url && m.StoreKey() == key {
		if _, err := os.Stat(events.DBPath(dir)); err == nil {
			st, err := p.EventLog(ctx)
			if err == nil {
				h, err := st.Head(ctx)
				if err != nil {
					return nil, err
				}
				return &Result{Status: "unchanged", From: "postgres", To: "postgres", ProjectRevision: h.Revision,
					HeadHash: hex.EncodeToString(h.Hash), Projections: []replay.ProjectionChecksum{}, Next: "awr status"}, nil
			}
			if !fault.Is(err, fault.VerifyFailed) {
				return nil, err
			}
			// A manifest that names the store over a log of its own: an
			// earlier migrate stopped after writing it. Go on.
		}
	} else if m.Store != nil {
		return nil, fault.New(fault.InvalidTransition, "migrate: the log is already in the shared store %s (project %s); a shared log moves by way of sqlite", m.Store.URL, m.StoreKey()).
			WithHint("awr migrate --to sqlite")
	}
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors(), LockTimeout: lockTimeout})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	up, err := openUpstream(ctx, url, key)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	res := &Result{Status: "migrated", From: "sqlite", To: "postgres", Next: "git add .awr/project.toml && git commit -m 'awr: the log is shared'"}
	attached, err := st.Attach(ctx, up, func(tx *events.Tx, h events.Head) error {
		live, err := replay.Checksums(tx.Conn)
		if err != nil {
			return err
		}
		copied, err := foldFrom(ctx, dir, url, key, progress.of("checking the copy"))
		if err != nil {
			return err
		}
		if err := sameProjections("migrate --to postgres", live, copied); err != nil {
			return err
		}
		res.Projections = live
		next := *m
		next.Store = &intake.StoreTable{URL: url, Project: key}
		return intake.WriteManifest(dir, &next)
	}, progress.of("copying"))
	if err != nil {
		return nil, err
	}
	res.ProjectRevision, res.HeadHash, res.Copied, res.Requests = attached.Head.Revision, hex.EncodeToString(attached.Head.Hash), attached.Copied, attached.Requests
	return res, nil
}

// openUpstream connects to the shared log at url under key.
func openUpstream(ctx context.Context, url, key string) (events.Upstream, error) {
	return pgstore.Open(ctx, url, pgstore.Options{Project: key})
}

// foldFrom builds, in a temporary file, a cache of the shared log from
// scratch and returns its projections' checksums: what any machine joining
// the shared log would derive. progress draws its fold.
func foldFrom(ctx context.Context, dir, url, key string, progress func(done, total int64)) ([]replay.ProjectionChecksum, error) {
	tmp, err := os.MkdirTemp(filepath.Join(dir, ".awr"), ".migrate-check-")
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "migrate: make a scratch cache")
	}
	defer os.RemoveAll(tmp)
	up, err := openUpstream(ctx, url, key)
	if err != nil {
		return nil, err
	}
	scratch, err := events.Open(ctx, filepath.Join(tmp, "check.db"), events.Options{Create: true, Upstream: up, Projectors: projections.Projectors(), Progress: progress})
	if err != nil {
		up.Close()
		return nil, err
	}
	defer scratch.Close()
	var sums []replay.ProjectionChecksum
	err = scratch.Read(ctx, func(r *events.Reader) error {
		var err error
		sums, err = replay.Checksums(r.Conn)
		return err
	})
	return sums, err
}

// sameProjections is VerifyFailed naming the first projection whose
// checksums differ.
func sameProjections(op string, want, got []replay.ProjectionChecksum) error {
	for i := range want {
		if i >= len(got) || want[i].Checksum != got[i].Checksum {
			g := ""
			if i < len(got) {
				g = got[i].Checksum
			}
			return fault.New(fault.VerifyFailed, "%s: projection %s folded from the copy has checksum %s, the log's own has %s; the manifest is unchanged", op, want[i].Name, g, want[i].Checksum).
				With("projection", want[i].Name).WithHint("awr verify")
		}
	}
	return nil
}

// ToSQLite makes the project's cache, caught up to the shared log's head
// under its lock, the project's own log again and removes the manifest's
// [store] table; the shared log is left in PostgreSQL as it is. A project
// whose log is its file already is "unchanged". The caller holds the
// project's directory and manifest locks and has closed its log.
//
// Errors: those of opening the project's log; VerifyFailed when the
// cache's projections differ from a rebuild; Storage. progress draws the
// rebuild that checks the cache.
func ToSQLite(ctx context.Context, p Project, m *intake.Manifest, progress Progress) (*Result, error) {
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	if m.Store == nil {
		h, err := st.Head(ctx)
		if err != nil {
			return nil, err
		}
		return &Result{Status: "unchanged", From: "sqlite", To: "sqlite", ProjectRevision: h.Revision,
			HeadHash: hex.EncodeToString(h.Hash), Projections: []replay.ProjectionChecksum{}, Next: "awr status"}, nil
	}
	res := &Result{Status: "migrated", From: "postgres", To: "sqlite", Next: "git add .awr/project.toml && git commit -m 'awr: the log is this checkout's'"}
	// The projections are rebuilt and checked under the shared log's
	// lock: that write sets no idle limit (pgstore.Options.IdleLimit).
	detached, err := st.Detach(pgstore.WithoutIdleLimit(ctx), func(tx *events.Tx, h events.Head) error {
		live, err := replay.Checksums(tx.Conn)
		if err != nil {
			return err
		}
		rebuilt, err := replay.ScratchChecksums(tx.Conn, h.Revision, progress.of("checking the log"))
		if err != nil {
			return err
		}
		if err := sameProjections("migrate --to sqlite", rebuilt, live); err != nil {
			return err
		}
		res.Projections = live
		next := *m
		next.Store = nil
		return intake.WriteManifest(p.Dir(), &next)
	})
	if err != nil {
		return nil, err
	}
	res.ProjectRevision, res.HeadHash, res.Requests = detached.Head.Revision, hex.EncodeToString(detached.Head.Hash), detached.Requests
	return res, nil
}
