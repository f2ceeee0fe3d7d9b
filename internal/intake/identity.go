package intake

// The identity of a project's log: the project its project_initialized
// names, held to the id the directory recorded (.awr/project-id), so
// that another project's database put in .awr/ is refused.

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
)

// IdentityAgrees refuses a log whose project is not the one this
// directory recorded (another project's database put in .awr/): its
// project_initialized must carry the id in .awr/project-id. A project
// without that file (made by an older awr) is not checked.
// Errors: Storage naming both ids.
func IdentityAgrees(ctx context.Context, dir string, st *events.Store, op string) error {
	if RecordedProjectID(dir) == "" {
		return nil
	}
	id, name, err := ProjectOf(ctx, st)
	if err != nil {
		return err
	}
	return IDAgrees(dir, id, name, op)
}

// IDAgrees is IdentityAgrees with the log's project id and name in hand.
func IDAgrees(dir, id, name, op string) error {
	want := RecordedProjectID(dir)
	if want == "" || id == want {
		return nil
	}
	return fault.New(fault.Storage, "%s: %s holds the log of project %s (%q), but %s says this is project %s: the database is another project's", op, events.DBPath(dir), id, name, ProjectIDPath(dir), want).
		With("path", events.DBPath(dir)).With("project_id", id).With("recorded_project_id", want).
		WithHint("awr import EXPORT.jsonl --project NEW_DIR")
}

// ProjectOf returns the id and name the log's project_initialized gives.
func ProjectOf(ctx context.Context, st *events.Store) (id, name string, err error) {
	err = st.Read(ctx, func(r *events.Reader) error {
		id, name, err = ProjectOn(r.Conn)
		return err
	})
	return id, name, err
}

// ProjectOn is ProjectOf inside a read the caller holds.
func ProjectOn(conn *sqlite.Conn) (id, name string, err error) {
	err = events.ScanEvents(conn, 1, 1, func(e *events.Event) error {
		if v, err := events.Decode(e); err == nil {
			if pi, ok := v.(*events.ProjectInitialized); ok {
				id, name = pi.ProjectID, pi.Name
			}
		}
		return nil
	})
	return id, name, err
}
