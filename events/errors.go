package events

import (
	"context"
	"errors"

	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
)

// mapErr turns SQLite errors into coded faults and passes coded faults
// through unchanged.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fault.Wrap(fault.Storage, err, "%s: database is busy (gave up waiting for the write lock, which another awr process holds; retry)", op)
	}
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultBusy, sqlite.ResultLocked, sqlite.ResultInterrupt:
		return fault.Wrap(fault.Storage, err, "%s: database is busy (gave up waiting for the write lock, which another awr process holds; retry)", op)
	case sqlite.ResultFull:
		return fault.Wrap(fault.Storage, err, "%s: disk or database is full; nothing was written; free disk space, then retry", op)
	case sqlite.ResultReadOnly:
		return fault.Wrap(fault.Storage, err, "%s: database is read-only; nothing was written; check the permissions of .awr/awr.db", op)
	case sqlite.ResultCorrupt, sqlite.ResultNotADB:
		return fault.Wrap(fault.Storage, err, "%s: the project's database is damaged: the database file is corrupt or not an SQLite database; restore it from a backup copy of .awr/awr.db, or import an export into a new project", op).
			WithHint(RestoreHint)
	case sqlite.ResultIOErr:
		return fault.Wrap(fault.Storage, err, "%s: the database file could not be written or read (disk full, file too large, or a failing disk); nothing was written; free disk space or check the disk, then retry", op)
	case sqlite.ResultConstraint:
		return fault.Wrap(fault.Storage, err, "%s: constraint violated; nothing was written", op)
	}
	return fault.Wrap(fault.Storage, err, "%s", op)
}
