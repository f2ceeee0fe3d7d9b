package pathcheck

import (
	"os"
	"syscall"

	"github.com/awr-dev/awr/internal/fault"
)

// Lock takes an exclusive advisory lock (flock) on the file at path
// (created 0600 when missing), held until the returned function is
// called; what names the lock in errors (Storage).
func Lock(path, what string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	return flock(f, err, what, path)
}

// LockDir takes an exclusive advisory lock (flock) on the directory dir
// itself, held until the returned function is called, so that two
// inits, imports or migrations of the project in dir never build or
// clean up each other's files. It creates nothing.
// Errors: Storage when the directory cannot be opened or locked.
func LockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	return flock(f, err, "lock", dir)
}

// flock locks f, which opening path gave (with err), for Lock and
// LockDir.
func flock(f *os.File, err error, what, path string) (func(), error) {
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
