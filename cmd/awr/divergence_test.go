package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestShared_NoFalseDivergence (issue #40, item 2): several awr processes
// at once on one checkout of a shared log, mixing reads (status, ready,
// log) and writes (checkpoints, session starts), share one cache: a
// process that read the shared log's head just before another committed
// a write to the shared log and then to the cache must not take the
// cache for one the shared log does not continue. Every operation
// succeeds: 0 VerifyFailed over 300 operations (2,000 with AWR_LONG=1).
// Then a real divergence, the shared log rewritten shorter than the
// cache, is still caught, by reads and writes, with a message that says
// what moving the cache aside keeps and what a new cache holds.
func TestShared_NoFalseDivergence(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	ops, workers := 300, 8
	if os.Getenv("AWR_LONG") == "1" {
		ops, workers = 2000, 8
	}
	bin := buildAWR(t)
	dir, awr := initialized(t, bin, "--name", "busy", "--store", dbURL)
	sessions := make([]string, workers)
	for i := range sessions {
		var started struct {
			Session struct{ ID string } `json:"session"`
		}
		runJSON(t, awr("session", "start", "--work", "CART-1", "--agent", fmt.Sprintf("w%d", i), "--json"), &started)
		sessions[i] = started.Session.ID
	}

	var mu sync.Mutex
	divergent, failed, done := 0, []string{}, 0
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; n < ops; n += workers {
				var args []string
				switch n % 5 {
				case 0:
					args = []string{"status", "--json"}
				case 1:
					args = []string{"session", "checkpoint", "--session", sessions[w], "--agent", fmt.Sprintf("w%d", w), "--digest", fmt.Sprintf("op %d", n), "--next-action", "go on", "--json"}
				case 2:
					args = []string{"ready", "--json"}
				case 3:
					args = []string{"session", "checkpoint", "--session", sessions[w], "--agent", fmt.Sprintf("w%d", w), "--digest", fmt.Sprintf("op %d", n), "--next-action", "go on", "--json"}
				case 4:
					args = []string{"log", "--limit", "3", "--json"}
				}
				var stdout, stderr bytes.Buffer
				cmd := awr(args...)
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				mu.Lock()
				done++
				if err != nil {
					var fe cliError
					if json.Unmarshal(stderr.Bytes(), &fe) == nil && fe.Code == "VerifyFailed" {
						divergent++
					}
					failed = append(failed, fmt.Sprintf("awr %s: %v: %s", strings.Join(args, " "), err, stderr.String()))
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	t.Logf("%d operations by %d processes at a time on one checkout: %d VerifyFailed, %d failures", done, workers, divergent, len(failed))
	require.Zero(t, divergent, "false divergences: %s", strings.Join(failed, "\n"))
	require.Empty(t, failed)
	var verify struct {
		OK bool `json:"ok"`
	}
	runJSON(t, awr("verify", "--json"), &verify)
	require.True(t, verify.OK)

	// A real divergence: the shared log rewritten shorter than the cache
	// (its last two events gone, the head moved back). Reads and writes
	// refuse, and nothing is written.
	var st sharedStatus
	runJSON(t, awr("status", "--json"), &st)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	for _, q := range []string{
		"ALTER TABLE awr_events DISABLE TRIGGER USER",
		"DELETE FROM awr_events WHERE project = 'busy' AND seq > " + fmt.Sprint(st.ProjectRevision-2),
		"UPDATE awr_heads h SET seq = e.seq, hash = e.hash, occurred_at = e.occurred_at FROM awr_events e WHERE h.project = 'busy' AND e.project = 'busy' AND e.seq = " + fmt.Sprint(st.ProjectRevision-2),
		"ALTER TABLE awr_events ENABLE TRIGGER USER",
	} {
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err, q)
	}
	conn.Close(ctx)
	cache := filepath.Join(dir, ".awr", "awr.db")
	for _, args := range [][]string{{"status", "--json"}, {"session", "checkpoint", "--session", sessions[0], "--agent", "w0", "--digest", "after", "--next-action", "go on", "--json"}} {
		fe := runFail(t, awr(args...))
		require.Equal(t, "VerifyFailed", fe.Code, "awr %s: %+v", strings.Join(args, " "), fe)
		require.Contains(t, fe.Message, "nothing was written")
		require.Contains(t, fe.Message, "mv "+cache+" "+cache+".diverged")
		require.Contains(t, fe.Message, "keeps")
		require.NotContains(t, fe.Message, "rm ")
	}
	require.Equal(t, st.ProjectRevision-2, sharedCount(t, dbURL, "busy"))
	_, err = os.Stat(cache)
	require.NoError(t, err, "the cache is left where it was")
}
