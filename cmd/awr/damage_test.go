package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// damageOutcome is what one command did on a damaged project.
type damageOutcome struct {
	exit            int
	code, msg, hint string
	stdout          string
}

// runIn runs awr in-process on the project at dir.
func runIn(dir string, args ...string) damageOutcome {
	var stdout, stderr bytes.Buffer
	exit := run(append([]string{"--project", dir}, append(args, "--json")...), &stdout, &stderr)
	o := damageOutcome{exit: exit, stdout: stdout.String()}
	var e struct{ Code, Message, Hint string }
	if json.Unmarshal(stderr.Bytes(), &e) == nil {
		o.code, o.msg, o.hint = e.Code, e.Message, e.Hint
	} else {
		o.msg = stderr.String()
	}
	return o
}

// TestDamage_EverySchemaObjectDropped drops each table, index and trigger
// of a real project's database in turn (the log's own, the projections'
// and the full-text index's shadow tables) and runs status, ready, log,
// verify, session start, session checkpoint and replay on it: none
// panics, and each does what the schema check at open decides. A
// projection's object missing: every command works (the projection is
// rebuilt from the log at open, as projections are disposable) and the
// object is back. An append-only trigger missing: reads and replay work,
// verify fails naming the triggers (VerifyFailed), writes are refused
// (Storage "damaged", hint awr verify). Any other object of the log's
// schema missing: every command is Storage "damaged", naming it, with
// the restore hint.
// Slow: one project copy and two commands (in process) per schema object (over 80).
func TestDamage_EverySchemaObjectDropped(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(base, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: Work\n- [ ] W-2: More\n"), 0o644))
	require.Zero(t, runIn(base, "init", "--accept").exit)
	started := runIn(base, "session", "start", "--work", "W-1", "--agent", "a", "--claim")
	require.Zero(t, started.exit, started.msg)
	var s struct{ Session struct{ ID string } }
	require.NoError(t, json.Unmarshal([]byte(started.stdout), &s))
	require.Zero(t, runIn(base, "session", "checkpoint", "--session", s.Session.ID, "--agent", "a", "--digest", "d", "--next-action", "n").exit)

	objects := schemaObjectsOf(t, events.DBPath(base))
	require.Greater(t, len(objects), 80, "tables, indexes and triggers of a project")
	all := [][]string{
		{"status"}, {"ready"}, {"log"}, {"verify"},
		{"session", "start", "--work", "W-2", "--agent", "b"},
		{"session", "checkpoint", "--session", s.Session.ID, "--agent", "a", "--digest", "d2", "--next-action", "n2"},
		{"replay"},
	}
	triggers := map[string]bool{"events_no_update": true, "events_no_delete": true, "events_seq_gapless": true}
	for i, obj := range objects {
		// Every object meets every command with AWR_LONG=1, and the
		// three append-only triggers do in the default run too; there
		// any other object meets status and one other, in turn (each of
		// the six others meets a sixth of them).
		commands := all
		switch {
		case os.Getenv("AWR_LONG") != "":
		case testkit.Race:
			// Under -race (the store's rebuild at open costs several
			// times as much), one command per object, in turn.
			commands = [][]string{all[i%len(all)]}
		case triggers[obj.name]:
		default:
			commands = [][]string{all[0], all[1+i%6]}
		}
		t.Run(obj.name, func(t *testing.T) {
			dir := t.TempDir()
			copyProject(t, base, dir)
			db := events.DBPath(dir)
			conn, err := sqlite.OpenConn(db, sqlite.OpenReadWrite)
			require.NoError(t, err)
			require.NoError(t, sqlitex.ExecuteTransient(conn, "DROP "+strings.ToUpper(obj.kind)+" "+obj.name, nil))
			require.NoError(t, conn.Close())
			for _, args := range commands {
				o := runIn(dir, args...)
				what := strings.Join(args[:min(2, len(args))], " ")
				write := args[0] == "session"
				require.NotEqual(t, "Internal", o.code, "%s: %s", what, o.msg)
				switch {
				case strings.HasPrefix(obj.name, "p_"):
					require.Zero(t, o.exit, "%s: a projection is rebuilt: %s %s", what, o.code, o.msg)
				case triggers[obj.name] && what == "verify":
					require.Equal(t, "VerifyFailed", o.code, o.msg)
					require.Contains(t, o.msg, "append-only triggers were removed")
				case triggers[obj.name] && write:
					require.Equal(t, 1, o.exit)
					require.Equal(t, "Storage", o.code, o.msg)
					require.Contains(t, o.msg, "database is damaged")
					require.Contains(t, o.msg, obj.name)
					require.True(t, strings.HasPrefix(o.hint, "awr verify"), o.hint)
				case triggers[obj.name]:
					require.Zero(t, o.exit, "%s: %s %s", what, o.code, o.msg)
				default:
					require.Equal(t, 1, o.exit, "%s", what)
					require.Equal(t, "Storage", o.code, "%s: %s", what, o.msg)
					require.Contains(t, o.msg, "the project's database is damaged")
					require.Contains(t, o.msg, obj.name)
					require.True(t, strings.HasPrefix(o.hint, events.RestoreHint), o.hint)
				}
			}
			if strings.HasPrefix(obj.name, "p_") {
				names := map[string]bool{}
				for _, o := range schemaObjectsOf(t, db) {
					names[o.name] = true
				}
				require.True(t, names[obj.name], "%s is rebuilt", obj.name)
			}
		})
	}
}

type schemaObject struct{ kind, name string }

// schemaObjectsOf lists the tables, indexes and triggers of the database
// at path (SQLite's own left out).
func schemaObjectsOf(t *testing.T, path string) []schemaObject {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	require.NoError(t, err)
	defer conn.Close()
	var out []schemaObject
	require.NoError(t, sqlitex.ExecuteTransient(conn, "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'index', 'trigger') AND name NOT LIKE 'sqlite%' ORDER BY type, name", &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error {
			out = append(out, schemaObject{st.ColumnText(0), st.ColumnText(1)})
			return nil
		}}))
	return out
}

// copyProject copies a closed project's files (the task file, the
// manifest, the database with its WAL) from src to dst.
func copyProject(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	}))
}

// TestPanicFault: a panic in a command is reported as Internal, naming
// the panic and the function of awr it happened in, with a hint, instead
// of a Go trace.
func TestPanicFault(t *testing.T) {
	var err error
	func() {
		defer func() { err = panicFault(recover()) }()
		var m map[string]int
		m["x"] = 1
	}()
	fe := fault.As(err)
	require.Equal(t, fault.Internal, fe.Code)
	require.Contains(t, fe.Message, "assignment to entry in nil map")
	require.Contains(t, fe.Message, "TestPanicFault")
	require.Contains(t, fe.Message, "damage_test.go:")
	require.Equal(t, "awr verify", fe.Hint)
}
