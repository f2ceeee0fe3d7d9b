package project

import (
	"os"
	"path/filepath"
	"syscall"

	"github.com/awr-dev/awr/internal/fault"
)

// lockManifest takes an exclusive lock for a read-modify-write of the
// project's manifest, held until the returned function is called. The
// lock is advisory (flock on .awr/manifest.lock) and is shared by every awr
// process on the machine, so concurrent `source add`s each see the
// others' entries.
// Errors: Storage when the lock file cannot be opened or locked.
func (p *Project) lockManifest() (func(), error) {
	path := filepath.Join(p.dir, ".awr", "manifest.lock")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "lock manifest")
	}
	return flock(path, "lock manifest")
}

// flock takes an exclusive advisory lock on the file at path (created when
// missing), held until the returned function is called; what names the
// lock in errors (Storage).
func flock(path, what string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fault.Wrap(fault.Storage, err, "%s %s", what, path)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fault.Wrap(fault.Storage, err, "%s %s", what, path)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
