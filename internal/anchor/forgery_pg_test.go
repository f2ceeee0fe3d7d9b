package anchor_test

import (
	"context"
	"os"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/project"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestAnchors_RefuseForgeriesPostgres: the twelve forgeries, applied to
// an anchored project whose log is in PostgreSQL (the shared log itself
// rewritten and re-hashed behind its triggers' back, then read by a
// checkout whose cache is built afresh from it), are refused by verify
// --anchors (anchor file and git notes) and by import --anchors of its
// export. The origin row, which only a cache holds, is forged into the
// rebuilt cache.
func TestAnchors_RefuseForgeriesPostgres(t *testing.T) {
	pgtest.ServerURL(t)
	t.Parallel()
	for _, f := range forgeries() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			a := newAnchoredLog(t, pgtest.NewDatabase(t))
			if f.name == "EditedPayload" {
				requireHolds(t, a) // once: the checks the forgeries fail can pass
			}
			l := &forged{evs: cloneEvents(readLog(t, a.dir))}
			f.forge(t, l, a)
			rewritePostgres(t, a, l.sealed())
			// Another machine's checkout: a cache built from the shared log.
			for _, suffix := range []string{"", "-wal", "-shm"} {
				require.NoError(t, os.RemoveAll(events.DBPath(a.dir)+suffix))
			}
			if l.origin != nil {
				ctx := context.Background()
				p, err := project.Open(ctx, a.dir, project.Options{})
				require.NoError(t, err)
				_, _ = p.Status(ctx, project.StatusRequest{})
				require.NoError(t, p.Close())
				setOrigin(t, events.DBPath(a.dir), l.origin)
			}
			checkRefused(t, f, a)
		})
	}
}

// rewritePostgres writes evs over the project's log in its shared
// database, with the append-only and gapless triggers disabled for the
// rewrite, and moves its head to the last of them.
func rewritePostgres(t *testing.T, a *anchoredLog, evs []*events.Event) {
	t.Helper()
	ctx := context.Background()
	m, ok, err := intake.ReadManifest(a.dir)
	require.NoError(t, err)
	require.True(t, ok)
	key := m.StoreKey()
	conn, err := pgx.Connect(ctx, a.store)
	require.NoError(t, err)
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	run := func(q string, args ...any) {
		t.Helper()
		_, err := tx.Exec(ctx, q, args...)
		require.NoError(t, err, "%s", q)
	}
	run("ALTER TABLE awr_events DISABLE TRIGGER USER")
	run("DELETE FROM awr_events WHERE project = $1", key)
	run("DELETE FROM awr_requests WHERE project = $1", key)
	for _, e := range evs {
		var req any
		if e.RequestID != "" {
			req = e.RequestID
		}
		run(`INSERT INTO awr_events (project, seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			key, e.Seq, e.ID, string(e.Kind), e.Stream, e.StreamVersion, e.OccurredAt, e.Actor, req, e.Payload, e.PrevHash, e.Hash)
	}
	last := evs[len(evs)-1]
	run("UPDATE awr_heads SET seq = $2, hash = $3, occurred_at = $4 WHERE project = $1", key, last.Seq, last.Hash, last.OccurredAt)
	run("ALTER TABLE awr_events ENABLE TRIGGER USER")
	require.NoError(t, tx.Commit(ctx))
}

// setOrigin puts origin in the origin table of the SQLite file path.
func setOrigin(t *testing.T, path string, origin *events.Origin) {
	t.Helper()
	rewriteSQLite(t, path, readLogAt(t, path), origin)
}
