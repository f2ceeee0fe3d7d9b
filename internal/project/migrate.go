package project

import (
	"context"

	"github.com/awr-dev/awr/internal/migrate"
	"github.com/awr-dev/awr/internal/pathcheck"
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

// Migrate moves the project's log (package migrate): --to postgres://…
// copies a project's own SQLite log into PostgreSQL and makes
// .awr/awr.db this machine's cache of it; --to sqlite makes the cache the
// project's own log again. It holds the project directory's and the
// manifest's locks meanwhile.
//
// Errors: InvalidInput for a URL that is not postgres:// or holds a
// password; NotFound without a manifest (hint awr init); InvalidTransition
// for a log already where --to says, a replica, or a cache asked to move
// to another store; SourceConflict when the key already holds another log;
// VerifyFailed when the copy differs; Storage.
func (p *Project) Migrate(ctx context.Context, req MigrateRequest) (*MigrateResult, error) {
	m, err := migrate.Manifest(p.dir, req.To)
	if err != nil {
		return nil, err
	}
	unlock, err := pathcheck.LockDir(p.dir)
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
	out, err := migrate.To(ctx, p, m, req.To, req.Key, p.opts.LockTimeout, p.opts.Progress)
	if err != nil {
		return nil, err
	}
	if out.Status == "migrated" {
		p.Close()
	}
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	return &MigrateResult{Status: out.Status, From: out.From, To: out.To, Store: p.storeStatus(st), ProjectRevision: out.ProjectRevision,
		HeadHash: out.HeadHash, Copied: out.Copied, Requests: out.Requests, Projections: out.Projections, Next: out.Next}, nil
}
