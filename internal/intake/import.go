package intake

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/replay"
)

// Import is an import of a JSONL export into the project in Dir, whose
// lock the caller holds: its reading, verifying and writing of the
// replica, and the project id it records.
type Import struct {
	Dir string
	// In is the export, Name what the errors call it; File is the
	// argument of `awr import`, for the hint of an interrupted import.
	In         io.Reader
	Name, File string
	Now        time.Time
	Witness    replay.Witness
	Progress   func(int64)
	// LogOf opens the project's log once the import linked it in, to
	// record its project id.
	LogOf func(ctx context.Context) (*events.Store, error)
}

// ImportDir checks the project directory dir an import goes into: a
// directory that does not exist, in one that does, is made (as the hints
// that name NEW_DIR say). done, called with the import's error, removes
// the directory it made unless the import left a log in it.
// Errors: InvalidInput for a dir that is not a directory and cannot be
// made (nothing is left behind).
func ImportDir(dir string) (done func(err error), err error) {
	done = func(error) {}
	fi, statErr := os.Stat(dir)
	if errors.Is(statErr, fs.ErrNotExist) && os.Mkdir(dir, 0o755) == nil {
		// A new directory (its parent exists): made here, and removed
		// again unless the import leaves a log in it.
		fi, statErr = os.Stat(dir)
		done = func(err error) {
			if _, serr := os.Stat(events.DBPath(dir)); err != nil && serr != nil {
				os.RemoveAll(dir)
			}
		}
	}
	if statErr != nil || !fi.IsDir() {
		err := fault.New(fault.InvalidInput, "import: --project %s is not a directory", dir).With("path", dir)
		done(err)
		return nil, err
	}
	return done, nil
}

// IntoNew imports into a project without a log: the log is built whole
// at a temporary path and only then linked to .awr/awr.db (BuildLog), so
// an interrupted or failed import leaves no log behind (and removes a
// .awr directory it created). A log whose project is not the one the
// directory recorded is not linked in. The result comes with an error
// only when the log was imported but its id could not be recorded.
// Errors: those of replay.ImportWitnessed and BuildLog; Storage (hint
// `awr import FILE`) for an interrupted import.
func (im *Import) IntoNew(ctx context.Context) (*replay.ImportResult, error) {
	dir := im.Dir
	_, dirErr := os.Stat(filepath.Join(dir, ".awr"))
	newDir := os.IsNotExist(dirErr)
	if !newDir {
		RemoveLeftovers(dir)
	}
	var res *replay.ImportResult
	err := BuildLog(ctx, dir, nil, func(st *events.Store) error {
		imp, err := replay.ImportWitnessed(ctx, st, im.In, im.Name, im.Now, im.Witness, im.Progress)
		if err != nil {
			return err
		}
		res = imp
		// Not linked in where another project's id is recorded: every
		// open would then refuse it.
		return IdentityAgrees(ctx, dir, st, "import")
	})
	if err != nil {
		if newDir {
			os.RemoveAll(filepath.Join(dir, ".awr"))
		}
		if ctx.Err() != nil {
			return nil, Interrupted("import", "awr import "+im.File)
		}
		return nil, err
	}
	// Past the commit point: nothing is removed any more, and a signal
	// no longer stops what is left (recording the id).
	if rerr := im.recordID(context.WithoutCancel(ctx)); rerr != nil {
		return res, fault.Wrap(fault.Storage, rerr, "import: the log was imported (%d events, project_revision %d), but its project id could not be recorded in %s", res.Events, res.ProjectRevision, ProjectIDPath(dir)).
			WithHint("awr verify")
	}
	return res, nil
}

// InPlace imports into st, the project's log, which exists and must hold
// no event (an older awr left it empty), in one transaction; the
// identity is checked, and recorded where none is. The result comes with
// an error only when the log was imported but its identity does not
// agree or could not be recorded.
// Errors: InvalidTransition (hint `awr import FILE --project EMPTY_DIR`)
// for a log with events; those of replay.ImportWitnessed; Storage for an
// interrupted import.
func (im *Import) InPlace(ctx context.Context, st *events.Store) (*replay.ImportResult, error) {
	dir := im.Dir
	var head int64
	if err := st.Read(ctx, func(r *events.Reader) error {
		head = r.Head
		return nil
	}); err != nil {
		return nil, err
	}
	if head > 0 {
		// Refused before the store would refuse a replica's write.
		return nil, fault.New(fault.InvalidTransition, "import: project already has %d events; import needs an empty project", head).
			With("project_revision", head).WithHint("awr import FILE --project EMPTY_DIR")
	}
	// What an interrupted init staged must not become this project's.
	RemoveLeftovers(dir)
	res, err := replay.ImportWitnessed(ctx, st, im.In, im.Name, im.Now, im.Witness, im.Progress)
	if err != nil && ctx.Err() != nil {
		return nil, Interrupted("import", "awr import "+im.File)
	}
	if err != nil {
		return nil, err
	}
	// Imported in place (into a log an older awr left empty): the
	// identity is checked, and recorded where none is.
	bg := context.WithoutCancel(ctx)
	if err := IdentityAgrees(bg, dir, st, "import"); err != nil {
		return res, err
	}
	if RecordedProjectID(dir) == "" {
		if err := im.recordID(bg); err != nil {
			return res, err
		}
	}
	return res, nil
}

// recordID records the project id of the log the import linked in (see
// RecordProjectID).
func (im *Import) recordID(ctx context.Context) error {
	st, err := im.LogOf(ctx)
	if err != nil {
		return err
	}
	id, _, err := ProjectOf(ctx, st)
	if err != nil {
		return err
	}
	return RecordProjectID(im.Dir, id)
}
