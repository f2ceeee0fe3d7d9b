package main

import (
	"bytes"
	"context"
	"encoding/json"
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
	admin, sessions := serverSessions(t, dbURL)
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

// TestShared_HookStartsNoHolder (issue #40): a hook (`awr client hook`)
// on a shared project never starts a connection holder, since nothing a
// host triggers may start a process; with a holder running (started by
// a person's command) hooks go through it. A hook on a checkout that has
// not joined yet builds its cache from the shared log, so it did reach
// the store; no `awr __hold-store` process of the test's runtime
// directory exists when it returns (a holder it started would: Start
// returns once the process runs, and one that reaches the server lives
// for minutes).
func TestShared_HookStartsNoHolder(t *testing.T) {
	dbURL := pgtest.NewDatabase(t)
	t.Parallel()
	bin := buildAWR(t)
	runtime, err := os.MkdirTemp("/tmp", "awrrun")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(runtime, 0o700))
	t.Cleanup(func() { os.RemoveAll(runtime) })
	t.Cleanup(func() { // any holder left, a failed run's too
		for _, pid := range holders(t, runtime) {
			syscall.Kill(pid, syscall.SIGTERM)
		}
	})
	first, plain := checkout(t, bin)
	// The project is made with the holder off: none runs yet.
	init := plain("init", "--name", "hooked", "--store", dbURL, "--accept", "--json")
	init.Env = append(init.Env, "AWR_STORE_HOLD=off")
	runJSON(t, init, &struct{}{})
	manifest := manifestOf(t, first)
	dir, joined := machine(t, bin, manifest)
	awr := func(args ...string) *exec.Cmd {
		cmd := joined(args...)
		cmd.Env = append(cmd.Env, "XDG_RUNTIME_DIR="+runtime)
		return cmd
	}
	hook := func(conversation string) {
		t.Helper()
		payload, err := json.Marshal(map[string]any{"session_id": conversation, "cwd": dir, "hook_event_name": "SessionStart", "source": "startup"})
		require.NoError(t, err)
		cmd := awr("client", "hook", "--client", "claude")
		cmd.Stdin = bytes.NewReader(payload)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, "%s", stderr.String())
		require.NotEmpty(t, out)
		require.Empty(t, stderr.String(), "the hook was answered")
	}

	hook("conv-1")
	_, err = os.Stat(filepath.Join(dir, ".awr", "awr.db"))
	require.NoError(t, err, "the hook joined: it reached the shared store and built this checkout's cache")
	require.Empty(t, holders(t, runtime), "a hook started a connection holder")
	m, _ := filepath.Glob(filepath.Join(runtime, fmt.Sprintf("awr-%d", os.Getuid()), "store-*", ".s.PGSQL.5432"))
	require.Empty(t, m, "a hook started a connection holder")

	// A person's command starts one; hooks then go through it, and
	// start no other.
	runJSON(t, awr("status", "--json"), &struct{}{})
	sockets := filepath.Join(runtime, fmt.Sprintf("awr-%d", os.Getuid()), "store-*", ".s.PGSQL.5432")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m, _ := filepath.Glob(sockets); len(m) == 1 {
			t.Cleanup(func() { stopHolder(t, filepath.Dir(m[0])) })
			break
		}
		require.True(t, time.Now().Before(deadline), "no holder socket at %s", sockets)
		time.Sleep(20 * time.Millisecond)
	}
	running := holders(t, runtime)
	require.Len(t, running, 1)
	_, sessions := serverSessions(t, dbURL)
	hook("conv-2") // warm: the holder keeps a spare
	before := sessions()
	for i := range 6 {
		hook(fmt.Sprintf("conv-%d", 3+i))
	}
	// Direct, each hook would start a backend: 6. The admin connection
	// and spares the holder starts may be counted meanwhile.
	require.LessOrEqual(t, sessions()-before, int64(3), "6 hooks through the holder")
	require.Equal(t, running, holders(t, runtime), "the hooks started no other holder")
}

// holders returns the process ids of the connection holders (`awr
// __hold-store`) whose environment names runtime as XDG_RUNTIME_DIR.
func holders(t *testing.T, runtime string) []int {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*")
	require.NoError(t, err)
	var out []int
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("\x00__hold-store")) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00XDG_RUNTIME_DIR="+runtime+"\x00")) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		if alive(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// serverSessions connects to the database at dbURL (closed when the test
// ends) and returns that connection and a count of the sessions the server
// started on the database (each counted by the time its backend is first
// idle, or exits).
func serverSessions(t *testing.T, dbURL string) (*pgx.Conn, func() int64) {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(ctx) })
	return admin, func() int64 {
		var n int64
		require.NoError(t, admin.QueryRow(ctx, "SELECT sessions FROM pg_stat_database WHERE datname = current_database()").Scan(&n))
		return n
	}
}
