package soak

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// writeChild opens the project and checkpoints in a loop, at most writes
// times, printing "committed SEQ ID" after each acknowledged write and
// "error CODE MESSAGE" for the first refusal. With fsize set it first
// limits the size of any file it writes to fsize bytes (RLIMIT_FSIZE),
// which is how the tests fill the disk.
func writeChild(dir, fsize, writes string) int {
	ctx := context.Background()
	out := os.Stdout
	report := func(err error) int {
		fe := fault.As(err)
		fmt.Fprintf(out, "error %s %s\n", fe.Code, fe.Message)
		return 0
	}
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	if err != nil {
		return report(err)
	}
	defer st.Close()
	if fsize != "" {
		n, err := strconv.ParseUint(fsize, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "child fsize:", err)
			return 3
		}
		// Past the limit write(2) fails with EFBIG instead of the process
		// dying of SIGXFSZ.
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			fmt.Fprintln(os.Stderr, "child setrlimit:", err)
			return 3
		}
	}
	limit, _ := strconv.Atoi(writes)
	env := commands.NewEnv(st)
	a := &acker{st: st, out: bufio.NewWriter(out)}
	res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "filler"})
	if err != nil {
		return report(err)
	}
	a.ack(ctx, res.ProjectRevision)
	digest := strings.Repeat("the quick brown fox jumps over the lazy dog ", 40)
	for i := 1; i < limit; i++ {
		kres, err := commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: res.Session.ID, Agent: "filler", Digest: fmt.Sprintf("%d %s", i, digest), NextAction: "next"})
		if err != nil {
			return report(err)
		}
		a.ack(ctx, kres.ProjectRevision)
	}
	fmt.Fprintln(out, "done")
	return 0
}

// runWriter runs writeChild to completion and returns its acknowledgements
// and its "error" line ("" when it finished without one).
func runWriter(t *testing.T, cmd *exec.Cmd) (map[int64]string, string) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "stderr: %s", stderr.String())
	return parseWriterOutput(t, string(out))
}

// parseWriterOutput returns writeChild's acknowledgements and its "error"
// line ("" when there is none).
func parseWriterOutput(t *testing.T, out string) (map[int64]string, string) {
	t.Helper()
	acked := map[int64]string{}
	require.NoError(t, parseAcks(out, acked))
	var refusal string
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, "error "); ok {
			refusal = rest
		}
	}
	return acked, refusal
}

// TestFault_DiskFull fills the disk under a writer (the child's file size
// limit stands in for a full file system): the write that does not fit is
// refused with Storage, and everything acknowledged before it survives a
// verify.
func TestFault_DiskFull(t *testing.T) {
	dir := newProject(t, 1)
	var size int64
	for _, suffix := range []string{"", "-wal"} {
		if fi, err := os.Stat(events.DBPath(dir) + suffix); err == nil && fi.Size() > size {
			size = fi.Size()
		}
	}
	acked, refusal := runWriter(t, childCmd(dir, "write", fmt.Sprintf("AWR_TEST_FSIZE=%d", size+256<<10), "AWR_TEST_WRITES=100000"))
	require.NotEmpty(t, refusal, "the disk never filled")
	require.True(t, strings.HasPrefix(refusal, string(fault.Storage)+" "), "refusal: %s", refusal)
	require.Contains(t, refusal, "nothing was written", "the refusal says what happened")
	require.NotEmpty(t, acked, "nothing was written before the disk filled")
	t.Logf("%d writes acknowledged, then: %s", len(acked), refusal)
	assertSoundLog(t, dir, acked)
}

// writeSome appends n checkpoints in-process and returns them by seq.
func writeSome(t *testing.T, dir string, n int) map[int64]string {
	t.Helper()
	ctx := context.Background()
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	require.NoError(t, err)
	defer st.Close()
	return writeWith(t, st, n)
}

func writeWith(t *testing.T, st *events.Store, n int) map[int64]string {
	t.Helper()
	ctx := context.Background()
	env := commands.NewEnv(st)
	res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "writer"})
	require.NoError(t, err)
	revs := []int64{res.ProjectRevision}
	for i := 1; i < n; i++ {
		k, err := commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: res.Session.ID, Agent: "writer", Digest: fmt.Sprintf("step %d", i), NextAction: "next"})
		require.NoError(t, err)
		revs = append(revs, k.ProjectRevision)
	}
	acked := map[int64]string{}
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		for _, rev := range revs {
			if err := events.ScanEvents(r.Conn, rev, rev, func(e *events.Event) error { acked[rev] = e.ID; return nil }); err != nil {
				return err
			}
		}
		return nil
	}))
	return acked
}

// TestFault_ReadOnly makes the database and its directory read-only and
// writes from a process that cannot override the permissions (as root, the
// child drops to nobody): the write is refused with Storage, nothing is
// written, and the log still verifies.
func TestFault_ReadOnly(t *testing.T) {
	dir := newProject(t, 1)
	acked := writeSome(t, dir, 3)
	cmd := childCmd(dir, "write", "AWR_TEST_WRITES=1")
	if os.Geteuid() == 0 {
		// Root ignores permission bits; run the child as nobody from a
		// copy of the test binary it can read, in directories it can enter.
		bin := filepath.Join(t.TempDir(), "soak.test")
		data, err := os.ReadFile(os.Args[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(bin, data, 0o755))
		for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), dir, filepath.Dir(dir)} {
			require.NoError(t, os.Chmod(d, 0o755))
		}
		cmd.Path, cmd.Args[0] = bin, bin
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	db := events.DBPath(dir)
	require.NoError(t, os.Chmod(db, 0o444))
	require.NoError(t, os.Chmod(filepath.Dir(db), 0o555))
	t.Cleanup(func() { _ = os.Chmod(filepath.Dir(db), 0o700) })
	got, refusal := runWriter(t, cmd)
	require.Empty(t, got, "a write to a read-only database was acknowledged")
	require.True(t, strings.HasPrefix(refusal, string(fault.Storage)+" "), "refusal: %q", refusal)
	t.Logf("refusal: %s", refusal)
	require.NoError(t, os.Chmod(filepath.Dir(db), 0o700))
	require.NoError(t, os.Chmod(db, 0o600))
	assertSoundLog(t, dir, acked)
}

// TestFault_DatabaseRemoved removes .awr/awr.db* under an open store. The
// open store refuses every later write with Storage (it would go to the
// unlinked file and be lost); a new open finds no project (NotFound, hint
// awr init), and a project initialized afresh holds none of the first
// store's acknowledged events.
func TestFault_DatabaseRemoved(t *testing.T) {
	ctx := context.Background()
	dir := newProject(t, 1)
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	require.NoError(t, err)
	defer st.Close()
	acked := writeWith(t, st, 2)
	files, err := filepath.Glob(events.DBPath(dir) + "*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		require.NoError(t, os.Remove(f))
	}
	_, err = commands.StartSession(ctx, commands.NewEnv(st), commands.StartRequest{Work: "W-1", Agent: "writer"})
	require.True(t, fault.Is(err, fault.Storage), "%v", err)
	require.Contains(t, err.Error(), "removed or replaced")

	_, err = events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	require.True(t, fault.Is(err, fault.NotFound), "%v", err)
	require.Equal(t, "awr init", fault.As(err).Hint)

	fresh, err := events.Open(ctx, events.DBPath(dir), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	defer fresh.Close()
	_, err = commands.Init(ctx, commands.NewEnv(fresh), commands.InitRequest{Name: "again"})
	require.NoError(t, err)
	require.NoError(t, fresh.Read(ctx, func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, 1, r.Head, func(e *events.Event) error {
			for seq, id := range acked {
				require.NotEqual(t, id, e.ID, "event %d of the removed log appears in the new project", seq)
			}
			return nil
		})
	}))
}

// TestFault_Truncated cuts the database file to half its size: opening or
// verifying it fails with a coded error (Storage or VerifyFailed) and a
// message, never a panic or a silent success.
func TestFault_Truncated(t *testing.T) {
	ctx := context.Background()
	dir := newProject(t, 1)
	writeSome(t, dir, 200) // closing checkpoints the WAL into the file
	db := events.DBPath(dir)
	_, err := os.Stat(db + "-wal")
	require.True(t, os.IsNotExist(err), "the WAL should be checkpointed and removed on close")
	fi, err := os.Stat(db)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(db, fi.Size()/2))

	st, err := events.Open(ctx, db, events.Options{Projectors: projections.Projectors()})
	if err == nil {
		defer st.Close()
		var res *replay.VerifyResult
		res, err = replay.Verify(ctx, st, nil)
		if err == nil {
			require.False(t, res.OK, "a truncated database verified")
			t.Logf("verify: %+v", res)
			return
		}
	}
	code := fault.CodeOf(err)
	require.Contains(t, []fault.Code{fault.Storage, fault.VerifyFailed}, code, "%v", err)
	require.NotEmpty(t, err.Error())
	t.Logf("%s: %v (hint %q)", code, err, fault.As(err).Hint)
}

// setPageLimit caps the database of st (opened with PoolSize 1, so that
// its one connection carries the setting) at its current size plus extra
// pages, with PRAGMA max_page_count.
func setPageLimit(t *testing.T, st *events.Store, extra int64) {
	t.Helper()
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		var pages int64
		if err := sqlitex.ExecuteTransient(r.Conn, "PRAGMA page_count", &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
			pages = s.ColumnInt64(0)
			return nil
		}}); err != nil {
			return err
		}
		return sqlitex.ExecuteTransient(r.Conn, fmt.Sprintf("PRAGMA max_page_count = %d", pages+extra), nil)
	}))
}

// TestFault_PageLimit fills the database to SQLite's page limit (PRAGMA
// max_page_count), the path on which SQLite itself reports a full disk
// (SQLITE_FULL): the write that does not fit is refused with Storage "disk
// or database is full; nothing was written", it appends nothing, the same
// write succeeds once there is room again (the hint), and every write
// acknowledged before survives a verify.
func TestFault_PageLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newProject(t, 1)
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{PoolSize: 1, Projectors: projections.Projectors()})
	require.NoError(t, err)
	defer st.Close()
	acked := writeWith(t, st, 3)
	env := commands.NewEnv(st)
	start, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "filler"})
	require.NoError(t, err)
	acked[start.ProjectRevision] = eventID(t, st, start.ProjectRevision)
	setPageLimit(t, st, 16)

	digest := strings.Repeat("the quick brown fox jumps over the lazy dog ", 40)
	req := func(i int) commands.CheckpointRequest {
		return commands.CheckpointRequest{SessionID: start.Session.ID, Agent: "filler", Digest: fmt.Sprintf("%d %s", i, digest), NextAction: "next"}
	}
	last := start.ProjectRevision
	var refused error
	i := 0
	for ; i < 10000 && refused == nil; i++ {
		res, err := commands.RecordCheckpoint(ctx, env, req(i))
		if err != nil {
			refused = err
			break
		}
		last = res.ProjectRevision
		acked[last] = eventID(t, st, last)
	}
	require.Error(t, refused, "the page limit never stopped a write")
	t.Logf("%d writes acknowledged, then: %v", len(acked), refused)
	fe := fault.As(refused)
	require.Equal(t, fault.Storage, fe.Code, "%v", refused)
	require.Equal(t, sqlite.ResultFull, sqlite.ErrCode(refused).ToPrimary(), "the refusal comes from SQLITE_FULL: %v", refused)
	require.Contains(t, fe.Message, "disk or database is full; nothing was written")
	require.Empty(t, fe.Hint)
	require.Contains(t, fe.Message, "free disk space, then retry")
	require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
		require.Equal(t, last, r.Head, "the refused write appended nothing")
		return nil
	}))

	// Room again: the same write goes through.
	setPageLimit(t, st, 1<<20)
	res, err := commands.RecordCheckpoint(ctx, env, req(i))
	require.NoError(t, err)
	acked[res.ProjectRevision] = eventID(t, st, res.ProjectRevision)
	require.NoError(t, st.Close())
	assertSoundLog(t, dir, acked)
}

// eventID returns the id of event seq.
func eventID(t *testing.T, st *events.Store, seq int64) string {
	t.Helper()
	var id string
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, seq, seq, func(e *events.Event) error { id = e.ID; return nil })
	}))
	require.NotEmpty(t, id, "no event %d", seq)
	return id
}

// TestFault_NewerSchema opens a project whose database a newer awr has
// migrated (a higher schema version): the open is refused with Storage
// naming both versions and `upgrade awr` in the message (no hint: no awr command helps), the file is left
// byte for byte as it was, and with the version put back every
// acknowledged event is there and the log verifies.
func TestFault_NewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newProject(t, 1)
	acked := writeSome(t, dir, 5)
	db := events.DBPath(dir)
	var version int
	setVersion := func(v int) {
		conn, err := events.OpenConn(db, sqlite.OpenReadWrite)
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, sqlitex.ExecuteTransient(conn, "PRAGMA user_version", &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
			version = s.ColumnInt(0)
			return nil
		}}))
		require.NoError(t, sqlitex.ExecuteTransient(conn, fmt.Sprintf("PRAGMA user_version = %d", v), nil))
	}
	setVersion(1 << 20)
	supported := version
	before, err := os.ReadFile(db)
	require.NoError(t, err)

	_, err = events.Open(ctx, db, events.Options{Projectors: projections.Projectors()})
	fe := fault.As(err)
	require.Equal(t, fault.Storage, fe.Code, "%v", err)
	require.Contains(t, fe.Message, fmt.Sprintf("schema version %d is newer than this awr supports (%d)", 1<<20, supported))
	require.Empty(t, fe.Hint)
	require.Contains(t, fe.Message, "upgrade awr")
	require.EqualValues(t, 1<<20, fe.Details["schema_version"])
	after, err := os.ReadFile(db)
	require.NoError(t, err)
	require.Equal(t, before, after, "a refused open changed the database file")

	setVersion(supported)
	assertSoundLog(t, dir, acked)
}
