package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/events/pgstore/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestShared_ConnectionHolder (issue #40, item 4): the first command on
// a shared project starts this user's connection holder for the store,
// and the commands after it start no server backend: reads and writes go
// through connections the holder keeps. Their answers are those of a
// direct connection (the write is in the shared log). With
// AWR_STORE_HOLD=off a command connects itself.
func TestShared_ConnectionHolder(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)
	_, plain := checkout(t, bin)
	runtime, err := os.MkdirTemp("/tmp", "awrrun")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(runtime, 0o700))
	t.Cleanup(func() { os.RemoveAll(runtime) })
	awr := func(args ...string) *exec.Cmd {
		cmd := plain(args...)
		cmd.Env = append(cmd.Env, "XDG_RUNTIME_DIR="+runtime)
		return cmd
	}
	runJSON(t, awr("init", "--name", "held", "--store", dbURL, "--accept", "--json"), &struct{}{})
	var started struct {
		Session struct{ ID string } `json:"session"`
	}
	runJSON(t, awr("session", "start", "--work", "CART-1", "--agent", "a", "--json"), &started)

	// The holder's socket appears (started by the commands above).
	sockets := filepath.Join(runtime, fmt.Sprintf("awr-%d", os.Getuid()), "store-*", ".s.PGSQL.5432")
	deadline := time.Now().Add(60 * time.Second)
	var sock string
	for {
		m, _ := filepath.Glob(sockets)
		if len(m) == 1 {
			sock = m[0]
			break
		}
		require.True(t, time.Now().Before(deadline), "no holder socket at %s", sockets)
		time.Sleep(20 * time.Millisecond)
	}
	t.Cleanup(func() { stopHolder(t, filepath.Dir(sock)) })
	// Warm: the holder keeps its connection and a spare.
	for range 2 {
		runJSON(t, awr("status", "--json"), &struct{}{})
	}

	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	defer admin.Close(ctx)
	// Sessions the server started on the database (each counted by the
	// time its backend is first idle, or exits).
	sessions := func() int64 {
		var n int64
		require.NoError(t, admin.QueryRow(ctx, "SELECT sessions FROM pg_stat_database WHERE datname = current_database()").Scan(&n))
		return n
	}
	before := sessions()
	var st sharedStatus
	for i := range 3 {
		runJSON(t, awr("status", "--json"), &st)
		runJSON(t, awr("ready", "--json"), &struct{}{})
		runJSON(t, awr("session", "checkpoint", "--session", started.Session.ID, "--agent", "a",
			"--digest", fmt.Sprintf("step %d", i), "--next-action", "go on", "--json"), &struct{}{})
	}
	// Direct, each command would start one: 9. The admin connection, a
	// spare the holder starts, and one started while the connection the
	// previous command left was being reset may be counted meanwhile.
	require.LessOrEqual(t, sessions()-before, int64(3), "9 commands through the holder")
	var head int64
	require.NoError(t, admin.QueryRow(ctx, "SELECT seq FROM awr_heads").Scan(&head))
	runJSON(t, awr("status", "--json"), &st)
	require.Equal(t, head, st.ProjectRevision, "the shared log holds the checkpoints")
	require.Equal(t, "postgres", st.Store.Kind)

	// Turned off, each command connects itself: a session each.
	before = sessions()
	for range 5 {
		off := awr("status", "--json")
		off.Env = append(off.Env, "AWR_STORE_HOLD=off")
		runJSON(t, off, &struct{}{})
	}
	deadline = time.Now().Add(60 * time.Second)
	for sessions()-before < 5 {
		require.True(t, time.Now().Before(deadline), "AWR_STORE_HOLD=off: 5 commands, %d sessions", sessions()-before)
		time.Sleep(20 * time.Millisecond)
	}
}

// stopHolder ends the holder serving dir (its pid file) and waits for it
// to be gone.
func stopHolder(t *testing.T, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return
	}
	syscall.Kill(pid, syscall.SIGTERM)
	deadline := time.Now().Add(60 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Errorf("the holder %d did not stop", pid)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}
