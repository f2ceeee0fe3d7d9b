package hosts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/internal/fault"
)

// What install keeps so that uninstall gives the file back byte for
// byte: Install and Uninstall work on the JSON's structure and write it
// back indented, so a file formatted otherwise (one line, other
// indentation) would come back reformatted. With Change.Keep set,
// install records the file as it was before awr's first install (or that
// there was none) and a digest of what it wrote; uninstall, finding the
// file still exactly as awr wrote it, writes that original back (or
// removes the file awr created). A file changed since is uninstalled by
// structure, every other key and hook kept. The project door keeps the
// records in the project's .awr/hosts/ (KeptDir), which is no change of
// the work.

// KeptDir is the directory, relative to a project, where the door keeps
// install's records.
const KeptDir = ".awr/hosts"

// kept is one settings file as it was before install.
type kept struct {
	Path     string `json:"path"`
	Absent   bool   `json:"absent"`
	Original []byte `json:"original"`
	// Written is the SHA-256 (hex) of the file install wrote.
	Written string `json:"written"`
}

// maxKept bounds a kept record (the original is at most MaxSettings).
const maxKept = 2*MaxSettings + 4096

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// keptPath is where the record of the settings file path is kept.
func keptPath(dir, path string) string {
	return filepath.Join(dir, digest([]byte(path))[:16]+".json")
}

// readKept returns the record kept for c's file, or nil when there is
// none, it is unreadable, or it is of another path.
func readKept(c Change) *kept {
	if c.Keep == "" {
		return nil
	}
	f, err := os.Open(keptPath(c.Keep, c.Path))
	if err != nil {
		return nil
	}
	defer f.Close()
	var k kept
	if json.NewDecoder(&limitedReader{f, maxKept}).Decode(&k) != nil || k.Path != c.Path {
		return nil
	}
	return &k
}

type limitedReader struct {
	f *os.File
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("kept record too large")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.f.Read(p)
	l.n -= int64(n)
	return n, err
}

// keep records, after install wrote out over existing (fp its
// fingerprint), the original of c's file: the one already kept when
// existing is what awr wrote before, else existing itself.
func keep(c Change, existing []byte, fp string, out []byte) error {
	if c.Keep == "" {
		return nil
	}
	k := kept{Path: c.Path, Absent: fp == Absent, Original: existing}
	if prev := readKept(c); prev != nil && fp != Absent && prev.Written == digest(existing) {
		k.Absent, k.Original = prev.Absent, prev.Original
	}
	k.Written = digest(out)
	data, err := json.Marshal(k)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "keep settings")
	}
	if err := os.MkdirAll(c.Keep, 0o700); err != nil {
		return fault.Wrap(fault.Storage, err, "keep settings").With("path", c.Keep)
	}
	return WriteAtomic(keptPath(c.Keep, c.Path), data)
}

// forget removes the record kept for c's file.
func forget(c Change) error {
	if c.Keep == "" {
		return nil
	}
	if err := os.Remove(keptPath(c.Keep, c.Path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fault.Wrap(fault.Storage, err, "forget kept settings").With("path", keptPath(c.Keep, c.Path))
	}
	return nil
}
