package pathcheck

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile writes data to path atomically (WriteWith).
func WriteFile(path string, data []byte, perm fs.FileMode, replace bool) error {
	return WriteWith(path, perm, replace, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteWith is awr's one atomic file write: write fills a temporary file
// in path's directory (.BASE.awr-*), which is given perm, synced, closed
// and put at path (Place: renamed over it when replace, otherwise linked
// there, never replacing a file that appeared meanwhile), and the
// directory is synced. A reader sees the old file or the new one, never a
// mix, and nothing is left half-written: after any failure the temporary
// file is gone and path is as it was.
// Errors: write's error as it returned it; *Error RuleExists when a file
// appeared at path and not replace; the file system's error otherwise
// (the caller names the operation).
func WriteWith(path string, perm fs.FileMode, replace bool, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".awr-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = Place(tmp.Name(), path, replace)
	}
	if err == nil {
		SyncDir(filepath.Dir(path))
	}
	return err
}

// SyncDir makes the entries of a directory durable; where a directory
// cannot be synced (some platforms) nothing more can be done.
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
