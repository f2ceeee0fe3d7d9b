package project

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
)

// MigrateRequest is `awr migrate`.
type MigrateRequest struct {
	To  string `name:"to" required:"" json:"to" help:"Where the log goes: a PostgreSQL URL (postgres://USER@HOST:PORT/DB, no password), or sqlite for the embedded file." placeholder:"URL|sqlite"`
	Key string `name:"key" json:"key,omitempty" help:"The project's key in the PostgreSQL database (default: the manifest's name)." placeholder:"KEY"`
}

// MigrateResult reports a migration: where the log was and is, and what
// was checked equal.
type MigrateResult struct {
	// Status is "migrated", or "unchanged" when the log was there already.
	Status string `json:"status"`
	From   string `json:"from"`
	To     string `json:"to"`
	// Store is where the log now lives.
	Store           *StoreStatus `json:"store"`
	ProjectRevision int64        `json:"project_revision"`
	HeadHash        string       `json:"head_hash"`
	// Copied is the number of events copied into PostgreSQL (0 going back
	// to sqlite, and for a copy an interrupted migration had made).
	Copied int64 `json:"copied"`
	// Requests is the number of idempotency records carried over (to
	// postgres: the file's; to sqlite: the shared log's, from every
	// machine), so a write retried with its --request-id after the move
	// is answered with its first result, as before it.
	Requests int64 `json:"requests"`
	// Projections are the checksums found equal: the projections folded
	// from the log in its new place against those of the old.
	Projections []replay.ProjectionChecksum `json:"projections"`
	Next        string                      `json:"next"`
}

// Migrate moves the project's log. --to postgres://… copies a project's
// own SQLite log, whole, into PostgreSQL under the project's key, checks
// the copy (the same head hash, and projections folded from the copy with
// the same checksums as the log's own), writes the manifest's [store]
// table and makes .awr/awr.db this machine's cache of it; nothing is
// appended meanwhile. --to sqlite makes the cache, caught up to the shared
// log's head under its lock, the project's own log again and removes the
// [store] table; the shared log is left in PostgreSQL as it is (other
// checkouts keep using it until their manifest changes).
//
// Errors: InvalidInput for a URL that is not postgres:// or holds a
// password; NotFound without a manifest (hint awr init); InvalidTransition
// for a log already where --to says, a replica, or a cache asked to move
// to another store; SourceConflict when the key already holds another log;
// VerifyFailed when the copy differs; Storage.
func (p *Project) Migrate(ctx context.Context, req MigrateRequest) (*MigrateResult, error) {
	if req.To != "sqlite" {
		if err := intake.CheckStoreURL("--to", req.To); err != nil {
			return nil, err
		}
	}
	m, ok, err := intake.ReadManifest(p.dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fault.New(fault.NotFound, "migrate: %s has no manifest (.awr/project.toml)", p.dir).
			With("path", intake.ManifestPath(p.dir)).WithHint("awr init")
	}
	unlock, err := lockDir(p.dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	unlockManifest, err := p.lockManifest()
	if err != nil {
		return nil, err
	}
	defer unlockManifest()
	p.Close()
	defer p.Close()
	if req.To == "sqlite" {
		return p.migrateToSQLite(ctx, m)
	}
	return p.migrateToShared(ctx, m, req)
}

func (p *Project) migrateToShared(ctx context.Context, m *intake.Manifest, req MigrateRequest) (*MigrateResult, error) {
	key := req.Key
	if key == "" {
		key = m.StoreKey()
	}
	if m.Store != nil && m.Store.URL == req.To && m.StoreKey() == key {
		if _, err := os.Stat(events.DBPath(p.dir)); err == nil {
			st, err := p.EventLog(ctx)
			if err == nil {
				h, err := st.Head(ctx)
				if err != nil {
					return nil, err
				}
				return &MigrateResult{Status: "unchanged", From: "postgres", To: "postgres", Store: p.storeStatus(st), ProjectRevision: h.Revision,
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
	shared := &sharedStore{url: req.To, key: key}
	st, err := events.Open(ctx, events.DBPath(p.dir), events.Options{Projectors: projections.Projectors(), LockTimeout: p.opts.LockTimeout})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	up, err := shared.openUpstream(ctx)
	if err != nil {
		return nil, err
	}
	defer up.Close()
	res := &MigrateResult{Status: "migrated", From: "sqlite", To: "postgres", Next: "git add .awr/project.toml && git commit -m 'awr: the log is shared'"}
	attached, err := st.Attach(ctx, up, func(tx *events.Tx, h events.Head) error {
		live, err := replay.Checksums(tx.Conn)
		if err != nil {
			return err
		}
		copied, err := p.foldFrom(ctx, shared)
		if err != nil {
			return err
		}
		if err := sameProjections("migrate --to postgres", live, copied); err != nil {
			return err
		}
		res.Projections = live
		next := *m
		next.Store = &intake.StoreTable{URL: req.To, Project: key}
		return intake.WriteManifest(p.dir, &next)
	})
	if err != nil {
		return nil, err
	}
	res.ProjectRevision, res.HeadHash, res.Copied, res.Requests = attached.Head.Revision, hex.EncodeToString(attached.Head.Hash), attached.Copied, attached.Requests
	st.Close()
	now, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	res.Store = p.storeStatus(now)
	return res, nil
}

// foldFrom builds, in a temporary file, a cache of the shared log from
// scratch and returns its projections' checksums: what any machine joining
// the shared log would derive.
func (p *Project) foldFrom(ctx context.Context, s *sharedStore) ([]replay.ProjectionChecksum, error) {
	dir, err := os.MkdirTemp(filepath.Join(p.dir, ".awr"), ".migrate-check-")
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "migrate: make a scratch cache")
	}
	defer os.RemoveAll(dir)
	up, err := s.openUpstream(ctx)
	if err != nil {
		return nil, err
	}
	scratch, err := events.Open(ctx, filepath.Join(dir, "check.db"), events.Options{Create: true, Upstream: up, Projectors: projections.Projectors()})
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

func (p *Project) migrateToSQLite(ctx context.Context, m *intake.Manifest) (*MigrateResult, error) {
	if m.Store == nil {
		st, err := p.EventLog(ctx)
		if err != nil {
			return nil, err
		}
		h, err := st.Head(ctx)
		if err != nil {
			return nil, err
		}
		return &MigrateResult{Status: "unchanged", From: "sqlite", To: "sqlite", Store: p.storeStatus(st), ProjectRevision: h.Revision,
			HeadHash: hex.EncodeToString(h.Hash), Projections: []replay.ProjectionChecksum{}, Next: "awr status"}, nil
	}
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	res := &MigrateResult{Status: "migrated", From: "postgres", To: "sqlite", Next: "git add .awr/project.toml && git commit -m 'awr: the log is this checkout's'"}
	detached, err := st.Detach(ctx, func(tx *events.Tx, h events.Head) error {
		live, err := replay.Checksums(tx.Conn)
		if err != nil {
			return err
		}
		rebuilt, err := replay.ScratchChecksums(tx.Conn, h.Revision, nil)
		if err != nil {
			return err
		}
		if err := sameProjections("migrate --to sqlite", rebuilt, live); err != nil {
			return err
		}
		res.Projections = live
		next := *m
		next.Store = nil
		return intake.WriteManifest(p.dir, &next)
	})
	if err != nil {
		return nil, err
	}
	res.ProjectRevision, res.HeadHash, res.Requests = detached.Head.Revision, hex.EncodeToString(detached.Head.Hash), detached.Requests
	p.Close()
	now, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	res.Store = p.storeStatus(now)
	return res, nil
}
