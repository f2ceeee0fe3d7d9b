package events

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
)

// RestoreHint is the hint of every error that finds the project's
// database damaged: import an export into a new project (a backup copy of
// .awr/awr.db put back in place is the other way, said in the message).
const RestoreHint = "awr import EXPORT.jsonl --project NEW_DIR"

// damaged is the Storage error for the project database at path when
// what is wrong with it is what: the message says the database is
// damaged, names the fault and says how to restore; the hint is
// RestoreHint.
func damaged(path, what string) *fault.Error {
	return fault.New(fault.Storage, "open project database %s: the project's database is damaged: %s; restore it from a backup copy of .awr/awr.db, or import an export into a new project", path, what).
		With("path", path).WithHint(RestoreHint)
}

// checkFileType refuses a path that names something other than a regular
// file (a directory, a FIFO, a device such as /dev/null, a socket), also
// behind a symbolic link, before SQLite opens it (a FIFO would block the
// open). A missing path is not refused here.
func checkFileType(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil
	}
	kind := "not a regular file"
	switch m := fi.Mode(); {
	case m.IsDir():
		kind = "a directory"
	case m&os.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&os.ModeCharDevice != 0:
		kind = "a character device"
	case m&os.ModeDevice != 0:
		kind = "a device"
	case m&os.ModeSocket != 0:
		kind = "a socket"
	}
	if target, err := os.Readlink(path); err == nil {
		kind += " (through the symbolic link to " + target + ")"
	}
	return damaged(path, "the file is "+kind+", not a regular file").With("file_type", fi.Mode().Type().String())
}

// SchemaProjector is a Projector that names the schema objects (tables,
// indexes, triggers, views) its Reset and EndBulk create. Open checks that
// they are all in the database; a projection missing one is rebuilt from
// the log, as projections are disposable.
type SchemaProjector interface {
	Projector
	// Objects returns the names of the projection's schema objects.
	Objects() []string
}

// ScriptObjects applies the CREATE and DROP statements of an SQL script to
// objects, a set of schema object names (tables, indexes, triggers,
// views): a name created is added, a name dropped removed. A statement is
// seen where a line begins with CREATE or DROP (as awr's schema scripts
// are written: one statement's head per line); other lines, comments
// among them, are skipped unread, so the check at open stays cheap.
func ScriptObjects(objects map[string]bool, script string) {
	for len(script) > 0 {
		line := script
		if i := strings.IndexByte(script, '\n'); i >= 0 {
			line, script = script[:i], script[i+1:]
		} else {
			script = ""
		}
		line = strings.TrimLeft(line, " \t")
		if len(line) < 5 || !(strings.EqualFold(line[:5], "CREAT") || strings.EqualFold(line[:4], "DROP")) {
			continue
		}
		words := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '(' || r == ';' || r == '\r' })
		verb := strings.ToUpper(words[0])
		if verb != "CREATE" && verb != "DROP" {
			continue
		}
		j := 1
		for j < len(words) && isModifier(words[j]) {
			j++
		}
		if j >= len(words) {
			continue
		}
		switch strings.ToUpper(words[j]) {
		case "TABLE", "INDEX", "TRIGGER", "VIEW":
		default:
			continue
		}
		j++
		for j < len(words) && isGuard(words[j]) {
			j++
		}
		if j >= len(words) {
			continue
		}
		name := strings.ToLower(strings.Trim(words[j], "\"`[]"))
		if verb == "CREATE" {
			objects[name] = true
		} else {
			delete(objects, name)
		}
	}
}

func isModifier(w string) bool {
	switch strings.ToUpper(w) {
	case "TEMP", "TEMPORARY", "UNIQUE", "VIRTUAL":
		return true
	}
	return false
}

func isGuard(w string) bool {
	switch strings.ToUpper(w) {
	case "IF", "NOT", "EXISTS":
		return true
	}
	return false
}

// migrationObjects returns the schema objects migrations 1..version
// leave, from migrationCreates.
func migrationObjects(version int) map[string]bool {
	objects := map[string]bool{}
	for _, names := range migrationCreates[:version] {
		for _, name := range names {
			objects[name] = true
		}
	}
	return objects
}

// migrationCreates names the objects each migration creates (index 0 is
// schema/001.sql); none drops one for good (005 redefines a trigger). The
// check at every open reads this list rather than the scripts (reading
// them from the binary costs a command page faults);
// TestMigrationObjects keeps it equal to what ScriptObjects reads from
// the scripts.
var migrationCreates = [][]string{
	{"events", "events_stream_seq", "events_seq_gapless", "events_no_update", "events_no_delete", "requests", "projections"},
	{"origin"},
	{"events_stream_kind"},
	{"shared_store"},
	{"events_seq_gapless"},
}

// schemaObjects reads the names of the database's tables, indexes,
// triggers and views.
func schemaObjects(conn *sqlite.Conn) (map[string]bool, error) {
	out := map[string]bool{}
	st := prep(conn, "schema_objects")
	if err := eachRow(st, func() bool {
		out[strings.ToLower(st.GetText("name"))] = true
		return true
	}); err != nil {
		return nil, mapErr("read schema", err)
	}
	return out, nil
}

// checkObjects compares the schema objects of the database at path,
// read on conn, with those its schema version's migrations leave and
// those the projectors name. It returns the projectors that miss an
// object (to be rebuilt).
// It returns too the append-only triggers that are missing (unprotected):
// the log opens, for verify to report them, but refuses writes.
// Errors: Storage "damaged" (RestoreHint) when another object of the log's
// own schema is missing (a table or index of the events, requests,
// projections, origin or shared_store tables), or when the database holds
// objects of a schema version above the one it records (its version was
// lowered).
func checkObjects(conn *sqlite.Conn, path string, version int, ps []Projector) (rebuild []Projector, unprotected []string, err error) {
	have, err := schemaObjects(conn)
	if err != nil {
		return nil, nil, err
	}
	want := migrationObjects(version)
	var missing []string
	for name := range want {
		if !have[name] && !appendOnlyTrigger[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, nil, damaged(path, fmt.Sprintf("%s %s missing from the log's schema (version %d)", strings.Join(missing, ", "), isAre(len(missing)), version)).
			With("missing", missing).With("schema_version", version)
	}
	if steps := len(migrations()); version < steps {
		var later []string
		for name := range migrationObjects(steps) {
			if !want[name] && have[name] {
				later = append(later, name)
			}
		}
		if len(later) > 0 {
			sort.Strings(later)
			return nil, nil, damaged(path, fmt.Sprintf("its schema version says %d, but it holds %s of a later version: the version was lowered", version, strings.Join(later, ", "))).
				With("schema_version", version).With("later_objects", later)
		}
	}
	for _, p := range ps {
		sp, ok := p.(SchemaProjector)
		if !ok {
			continue
		}
		for _, name := range sp.Objects() {
			if !have[strings.ToLower(name)] {
				rebuild = append(rebuild, p)
				break
			}
		}
	}
	for name := range want {
		if appendOnlyTrigger[name] && !have[name] {
			unprotected = append(unprotected, name)
		}
	}
	sort.Strings(unprotected)
	return rebuild, unprotected, nil
}

// appendOnlyTrigger names the triggers that keep the events table
// append-only and gapless. One missing is tamper evidence rather than
// damage: the log still opens, so that `awr verify` and `awr audit` can
// say what was changed behind them (design invariant 4), but every write
// is refused (unprotectedError).
var appendOnlyTrigger = map[string]bool{"events_no_update": true, "events_no_delete": true, "events_seq_gapless": true}

// unprotectedError is the refusal of a write to a log whose append-only
// triggers (names) are missing.
func unprotectedError(path string, names []string) *fault.Error {
	return fault.New(fault.Storage, "write: the project's database is damaged: the append-only trigger%s %s %s missing from %s, so the log is no longer protected and may have been edited; nothing was written; check it with awr verify, then restore it from a backup copy of .awr/awr.db or import an export into a new project", plural(len(names)), strings.Join(names, ", "), isAre(len(names)), path).
		With("path", path).With("missing", names).WithHint("awr verify")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
