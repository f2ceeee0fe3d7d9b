package hosts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
)

// MaxSettings is the largest settings file ReadSettings reads, in bytes.
const MaxSettings = 4 << 20

// Absent is the fingerprint of a settings file that does not exist.
const Absent = "absent"

// Fingerprint returns "sha256:" and the hex SHA-256 of a file's bytes, or
// Absent when exists is false. A preview records it; the write that follows
// checks it with Unchanged.
func Fingerprint(data []byte, exists bool) string {
	if !exists {
		return Absent
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// ReadSettings reads the settings file at path, following a symbolic link.
// A missing file is not an error: it returns nil bytes and Absent.
//
// Errors: InvalidInput when path is not a regular file or holds more than
// MaxSettings bytes; Storage for other file system errors.
func ReadSettings(path string) ([]byte, string, error) {
	const op = "read settings"
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO is refused below, never waited on
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Absent, nil
	}
	if err != nil {
		return nil, "", fault.Wrap(fault.Storage, err, "%s", op).With("path", path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", fault.Wrap(fault.Storage, err, "%s", op).With("path", path)
	}
	if !fi.Mode().IsRegular() {
		return nil, "", fault.New(fault.InvalidInput, "%s: %s is not a regular file", op, path).With("path", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSettings+1))
	if err != nil {
		return nil, "", fault.Wrap(fault.Storage, err, "%s", op).With("path", path)
	}
	if len(b) > MaxSettings {
		return nil, "", fault.New(fault.InvalidInput, "%s: %s is over %d bytes", op, path, MaxSettings).With("path", path)
	}
	return b, Fingerprint(b, true), nil
}

// Unchanged checks that the file at path still has the fingerprint a
// preview saw (Absent when it did not exist).
//
// Errors: SourceStale (details path, expected, actual) when the file changed
// since; those of ReadSettings.
func Unchanged(path, seen string) error {
	_, now, err := ReadSettings(path)
	if err != nil {
		return err
	}
	if now != seen {
		return fault.New(fault.SourceStale, "check settings: %s changed since the preview", path).
			With("path", path).With("expected", seen).With("actual", now)
	}
	return nil
}

// WriteAtomic replaces the file at path with data so that a reader sees the
// old contents or the new, never a mix (pathcheck.WriteFile: a temporary
// file in the same directory, synced, renamed over the target, the
// directory synced). Missing directories are created. A symbolic link at path is
// kept and its target replaced; an existing file keeps its permissions (new
// files get 0644).
//
// Errors: InvalidInput when the target exists and is not a regular file;
// Storage for file system errors (the temporary file is removed).
func WriteAtomic(path string, data []byte) error {
	const op = "write settings"
	target := path
	if resolved, rerr := filepath.EvalSymlinks(path); rerr == nil {
		target = resolved
	} else if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A dangling link: write where it points.
		if dest, e := os.Readlink(path); e == nil {
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(path), dest)
			}
			target = dest
		}
	}
	wrap := func(err error) error {
		return fault.Wrap(fault.Storage, err, "%s", op).With("path", path)
	}
	perm := fs.FileMode(0o644)
	if fi, serr := os.Stat(target); serr == nil {
		if !fi.Mode().IsRegular() {
			return fault.New(fault.InvalidInput, "%s: %s is not a regular file", op, path).With("path", path)
		}
		perm = fi.Mode().Perm()
	} else if !errors.Is(serr, fs.ErrNotExist) {
		return wrap(serr)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return wrap(err)
	}
	if err := pathcheck.WriteFile(target, data, perm, true); err != nil {
		return wrap(err)
	}
	return nil
}
