package soak

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// liveWriter is a writeChild running in the background: a command that is
// still writing while the test damages its database.
type liveWriter struct {
	cmd    *exec.Cmd
	lines  *bufio.Scanner
	out    strings.Builder
	stderr strings.Builder
	acks   int
}

// startWriter starts a writeChild on dir that checkpoints up to writes
// times.
func startWriter(t *testing.T, dir string, writes int) *liveWriter {
	t.Helper()
	w := &liveWriter{cmd: childCmd(dir, "write", "AWR_TEST_WRITES="+strconv.Itoa(writes))}
	w.cmd.Stderr = &w.stderr
	pipe, err := w.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, w.cmd.Start())
	t.Cleanup(func() { _ = w.cmd.Process.Kill() })
	w.lines = bufio.NewScanner(pipe)
	return w
}

// waitAcks reads the writer's output until it has acknowledged n writes
// in all; it fails if the writer stops first.
func (w *liveWriter) waitAcks(t *testing.T, n int) {
	t.Helper()
	for w.acks < n {
		require.True(t, w.lines.Scan(), "the writer stopped after %d acknowledgements: %s\nstderr: %s", w.acks, w.out.String(), w.stderr.String())
		l := w.lines.Text()
		w.out.WriteString(l + "\n")
		if strings.HasPrefix(l, "committed ") {
			w.acks++
		}
	}
}

// finish reads the rest of the writer's output and waits for it to exit;
// the writer must exit normally (a refusal is reported, never a crash). It
// returns the acknowledgements and the refusal ("" when none).
func (w *liveWriter) finish(t *testing.T) (map[int64]string, string) {
	t.Helper()
	for w.lines.Scan() {
		w.out.WriteString(w.lines.Text() + "\n")
	}
	require.NoError(t, w.cmd.Wait(), "the writer crashed; stderr: %s", w.stderr.String())
	return parseWriterOutput(t, w.out.String())
}

// TestFault_RemovedWhileWriting removes .awr/awr.db* while a process is
// writing to the project. The running process never crashes and refuses
// the writes after the removal with Storage (a write would otherwise go to
// the unlinked file and be lost; one already past the check when the file
// went may still be acknowledged). Afterwards awr finds no project (NotFound, hint awr init)
// rather than silently creating an empty one, and creates nothing.
func TestFault_RemovedWhileWriting(t *testing.T) {
	t.Parallel()
	dir := newProject(t, 1)
	w := startWriter(t, dir, 200)
	w.waitAcks(t, 20)
	files, err := filepath.Glob(events.DBPath(dir) + "*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		require.NoError(t, os.Remove(f))
	}
	acked, refusal := w.finish(t)
	require.True(t, strings.HasPrefix(refusal, string(fault.Storage)+" "), "refusal: %q", refusal)
	t.Logf("%d writes acknowledged (%d after the removal was seen by the test); refusal %q", len(acked), len(acked)-20, refusal)

	_, err = events.Open(context.Background(), events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	require.True(t, fault.Is(err, fault.NotFound), "%v", err)
	require.Equal(t, "awr init", fault.As(err).Hint)
	left, err := filepath.Glob(events.DBPath(dir) + "*")
	require.NoError(t, err)
	require.Empty(t, left, "a failed open created a database")
}

// TestFault_TruncatedWhileWriting cuts the database file to half its size
// while a process is writing to the project. The running process never
// crashes: each write is acknowledged or refused with Storage. Afterwards
// opening and verifying either reports the damage with a coded error
// (Storage at open, VerifyFailed at verify) or, if SQLite's write-ahead
// log put every page back, verifies with every acknowledged write present.
// An export taken before the damage imports into an empty project with
// every event it held: the recovery the error's hint names.
func TestFault_TruncatedWhileWriting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newProject(t, 1)
	before := writeSome(t, dir, 200) // closing checkpoints the WAL into the file
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	require.NoError(t, err)
	var export bytes.Buffer
	_, err = replay.Export(ctx, st, &export, -1)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	db := events.DBPath(dir)
	w := startWriter(t, dir, 200)
	w.waitAcks(t, 5)
	fi, err := os.Stat(db)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(db, fi.Size()/2))
	acked, refusal := w.finish(t)
	if refusal != "" {
		require.True(t, strings.HasPrefix(refusal, string(fault.Storage)+" "), "refusal: %s", refusal)
	}
	t.Logf("%d writes acknowledged; refusal %q", len(acked), refusal)
	for seq, id := range before {
		acked[seq] = id
	}

	st, err = events.Open(ctx, db, events.Options{Projectors: projections.Projectors()})
	if err != nil {
		require.Equal(t, fault.Storage, fault.CodeOf(err), "%v", err)
		require.NotEmpty(t, fault.As(err).Hint)
		t.Logf("open: %v (hint %q)", err, fault.As(err).Hint)
	} else {
		res, verr := replay.Verify(ctx, st, nil)
		require.NoError(t, st.Close())
		switch {
		case verr != nil:
			require.Contains(t, []fault.Code{fault.Storage, fault.VerifyFailed}, fault.CodeOf(verr), "%v", verr)
			t.Logf("verify: %v", verr)
		case !res.OK:
			t.Fatalf("verify failed without an error: %+v", res)
		default:
			t.Log("the write-ahead log restored every page")
			assertSoundLog(t, dir, acked)
		}
	}

	restored := t.TempDir()
	st, err = events.Open(ctx, events.DBPath(restored), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	_, err = replay.Import(ctx, st, &export, "before.jsonl")
	require.NoError(t, err)
	require.NoError(t, st.Close())
	assertSoundLog(t, restored, before)
}
