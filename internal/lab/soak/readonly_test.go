package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// awrCLI is the awr binary built for the read-only tests, in a directory
// every user may enter.
type awrCLI struct {
	bin string
}

func readOnlyCLI(t *testing.T) awrCLI {
	t.Helper()
	return awrCLI{bin: awrBinary(t)}
}

// openUp lets every user enter dir and its parent (t.TempDir makes them
// 0700).
func openUp(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		require.NoError(t, os.Chmod(d, 0o755))
	}
}

// result is one awr process's exit code and output.
type result struct {
	Code           int
	Stdout, Stderr string
}

// run runs awr with args on the project at dir, with --json. As reader it
// runs as a user who may not write the database (as root, nobody; else
// this user, whom the permissions lock out as well).
func (a awrCLI) run(t *testing.T, dir string, reader bool, args ...string) result {
	t.Helper()
	cmd := exec.Command(a.bin, append(args, "--json", "--project", dir)...)
	cmd.Dir = "/"
	if reader && os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := result{Stdout: stdout.String(), Stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.Code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return res
}

// awrFiles returns the bytes of every file in the project's .awr
// directory, by name.
func awrFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(filepath.Join(dir, ".awr"))
	require.NoError(t, err)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, ".awr", e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

// lockOut makes the project's database files and their directory
// read-only (for nobody, whatever they were: readable, not writable), and
// returns what puts them back.
func lockOut(t *testing.T, dir string) func() {
	t.Helper()
	openUp(t, dir)
	awr := filepath.Join(dir, ".awr")
	entries, err := os.ReadDir(awr)
	require.NoError(t, err)
	for _, e := range entries {
		require.NoError(t, os.Chmod(filepath.Join(awr, e.Name()), 0o444))
	}
	require.NoError(t, os.Chmod(awr, 0o555))
	restore := func() {
		os.Chmod(awr, 0o700)
		for _, e := range entries {
			os.Chmod(filepath.Join(awr, e.Name()), 0o600)
		}
	}
	t.Cleanup(restore)
	return restore
}

// populate gives the project at dir (from newProject) a claimed session
// with a checkpoint and an ended one, on st, and returns the claimed
// session's id.
func populate(t *testing.T, st *events.Store) string {
	t.Helper()
	ctx := context.Background()
	env := commands.NewEnv(st)
	res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-1", Agent: "alice", Claim: true})
	require.NoError(t, err)
	_, err = commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: res.Session.ID, Agent: "alice", Digest: "wrote the parser", NextAction: "test the parser",
		KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: []string{"the lexer drops tabs"}}})
	require.NoError(t, err)
	other, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "W-2", Agent: "bob"})
	require.NoError(t, err)
	_, err = commands.EndSession(ctx, env, commands.EndRequest{SessionID: other.Session.ID, Outcome: events.OutcomeCompleted, Agent: "bob"})
	require.NoError(t, err)
	return res.Session.ID
}

// copyFiles copies the named files of the project at from's .awr into
// to's, as they are now.
func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(to, ".awr"), 0o700))
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(from, ".awr", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(to, ".awr", name), b, 0o600))
	}
}

// TestReadOnly runs the awr binary as a user who may not write the
// project: Reads, then Refusals.
func TestReadOnly(t *testing.T) {
	t.Parallel()
	cli := readOnlyCLI(t)
	t.Run("Reads", func(t *testing.T) { testReadOnlyReads(t, cli) })
	t.Run("Refusals", func(t *testing.T) { testReadOnlyRefusals(t, cli) })
}

// testReadOnlyReads runs awr's reads as a user who may write neither the
// project database nor its directory (as root, the children run as
// nobody), with the database in each state it can be found in: closed
// (no write-ahead log), held open by a live writer (-wal and -shm with
// commits not yet in the file), left by a crashed writer (the same
// files, no process), and with a projection another awr version built.
// Every read succeeds, answers exactly what a writable open answers
// afterwards (the same JSON, the same exported bytes), and leaves every
// file of .awr byte for byte as it was, creating none.
func testReadOnlyReads(t *testing.T, cli awrCLI) {
	ctx := context.Background()
	open := func(t *testing.T, dir string) *events.Store {
		st, err := events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
		require.NoError(t, err)
		return st
	}
	for _, tc := range []struct {
		name string
		// setup makes the project and returns a session id and the files
		// .awr must hold.
		setup func(t *testing.T, dir string) (session string, files []string)
	}{
		{"Closed", func(t *testing.T, dir string) (string, []string) {
			st := open(t, dir)
			defer st.Close()
			return populate(t, st), []string{"awr.db"}
		}},
		{"LiveWriter", func(t *testing.T, dir string) (string, []string) {
			st := open(t, dir)
			t.Cleanup(func() { st.Close() })
			return populate(t, st), []string{"awr.db", "awr.db-shm", "awr.db-wal"}
		}},
		{"CrashedWriter", func(t *testing.T, dir string) (string, []string) {
			// The files a writer leaves when it dies, copied from a live
			// one: the log's commits are in -wal, indexed by -shm.
			live := newProject(t, 3)
			st := open(t, live)
			defer st.Close()
			session := populate(t, st)
			copyFiles(t, live, dir, "awr.db", "awr.db-wal", "awr.db-shm")
			return session, []string{"awr.db", "awr.db-shm", "awr.db-wal"}
		}},
		{"StaleProjection", func(t *testing.T, dir string) (string, []string) {
			// As if another awr version built one projection: a writable
			// open rebuilds it; the reader folds the log in memory.
			st := open(t, dir)
			session := populate(t, st)
			require.NoError(t, st.Close())
			conn, err := events.OpenConn(events.DBPath(dir), sqlite.OpenReadWrite)
			require.NoError(t, err)
			require.NoError(t, sqlitex.Execute(conn, "UPDATE projections SET version = version + 1000 WHERE name = ?", &sqlitex.ExecOptions{Args: []any{projections.All()[0].Name()}}))
			require.NoError(t, conn.Close())
			return session, []string{"awr.db"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := newProject(t, 3)
			session, files := tc.setup(t, dir)
			head, err := func() (int64, error) {
				st, err := events.Open(ctx, events.DBPath(dir), events.Options{ReadOnly: true})
				if err != nil {
					return 0, err
				}
				defer st.Close()
				h, err := st.Head(ctx)
				return h.Revision, err
			}()
			require.NoError(t, err)
			out := t.TempDir()
			openUp(t, out)
			require.NoError(t, os.Chmod(out, 0o777))
			reads := [][]string{
				{"status"},
				{"ready", "--all"},
				{"log"},
				{"session", "list"},
				{"session", "show", session},
				{"recovery", "inspect", "--session", session},
				{"context", "compile", "--work", "W-1", "--at", fmt.Sprint(head)},
				{"source", "list"},
				{"verify"},
				{"export", "--output", filepath.Join(out, "EXPORT.jsonl")},
			}
			before := awrFiles(t, dir)
			names := make([]string, 0, len(before))
			for name := range before {
				names = append(names, name)
			}
			require.ElementsMatch(t, files, names)
			restore := lockOut(t, dir)

			answers := func(reader bool) ([]result, string) {
				export := filepath.Join(out, fmt.Sprintf("reader-%v.jsonl", reader))
				var got []result
				for _, args := range reads {
					args = append([]string(nil), args...)
					if args[0] == "export" {
						args[len(args)-1] = export
					}
					res := cli.run(t, dir, reader, args...)
					res.Stdout = strings.ReplaceAll(res.Stdout, export, "EXPORT.jsonl")
					got = append(got, res)
				}
				b, _ := os.ReadFile(export)
				return got, string(b)
			}
			code := func(args []string) int {
				if args[0] == "context" {
					return 1 // ContextIncomplete: the work item names no goal
				}
				return 0
			}
			ro, roExport := answers(true)
			for i, args := range reads {
				require.Equal(t, code(args), ro[i].Code, "awr %v (read-only): %s", args, ro[i].Stderr)
				require.True(t, json.Valid([]byte(ro[i].Stdout)), "awr %v: %s", args, ro[i].Stdout)
			}
			require.Equal(t, before, awrFiles(t, dir), "the read-only reads changed or created a file in .awr")
			restore()
			rw, rwExport := answers(false)
			for i, args := range reads {
				require.Equal(t, code(args), rw[i].Code, "awr %v (writable): %s", args, rw[i].Stderr)
				require.Equal(t, rw[i], ro[i], "awr %v: the read-only answer differs from the writable one", args)
			}
			require.Equal(t, rwExport, roExport, "the exports differ")
			require.Equal(t, int(head), strings.Count(roExport, "\n"))
		})
	}
}

// testReadOnlyRefusals runs what a user who may not write the project
// cannot be served: a write (refused with Storage "database is
// read-only; nothing was written"), and a read of a write-ahead log
// whose index is missing (its commits cannot be read without creating
// the index: refused with Storage naming the file, rather than answered
// from the database file alone). Neither changes or creates a file.
func testReadOnlyRefusals(t *testing.T, cli awrCLI) {
	ctx := context.Background()
	refused := func(t *testing.T, dir string, args ...string) map[string]any {
		t.Helper()
		before := awrFiles(t, dir)
		lockOut(t, dir)
		res := cli.run(t, dir, true, args...)
		require.Equal(t, before, awrFiles(t, dir), "a refused command changed or created a file in .awr")
		require.Equal(t, 1, res.Code, "stdout: %s stderr: %s", res.Stdout, res.Stderr)
		require.Empty(t, res.Stdout)
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(res.Stderr), &e), res.Stderr)
		require.Equal(t, "Storage", e["code"], res.Stderr)
		require.Empty(t, e["hint"], "no awr command gives the permission: the message says what to do")
		return e
	}
	t.Run("Write", func(t *testing.T) {
		t.Parallel()
		dir := newProject(t, 3)
		e := refused(t, dir, "session", "start", "--work", "W-2", "--agent", "mallory")
		require.Contains(t, e["message"], "database is read-only; nothing was written; check the permissions")
	})
	t.Run("LogWithoutIndex", func(t *testing.T) {
		t.Parallel()
		live := newProject(t, 3)
		st, err := events.Open(ctx, events.DBPath(live), events.Options{Projectors: projections.Projectors()})
		require.NoError(t, err)
		defer st.Close()
		populate(t, st)
		dir := t.TempDir()
		copyFiles(t, live, dir, "awr.db", "awr.db-wal")
		e := refused(t, dir, "status")
		require.Contains(t, e["message"], events.DBPath(dir)+"-wal")
		require.Contains(t, e["message"], "run any awr command once as a user who can write")
		require.Equal(t, events.DBPath(dir), e["details"].(map[string]any)["path"])
	})
}
