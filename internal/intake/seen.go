package intake

import (
	"context"
	"encoding/json"
	"path/filepath"
	"time"

	"github.com/awr-dev/awr/internal/pathcheck"
)

// SeenFile is the file, in a project's .awr directory, where this
// checkout keeps what it found of its sources' files: a cache, never
// shared, never part of the log.
const SeenFile = "sources.seen"

// racyWindow is how old a file's modification time must be before its
// hash is kept: a file rewritten within the same tick of the file
// system's clock, at the same size, would otherwise keep a stale entry
// (git's "racily clean" files).
const racyWindow = 2 * time.Second

// seenCap bounds the seen file; a larger or broken one is read as empty.
const seenCap = 4 << 20

// SeenSource is what this checkout found of one source's file: its size
// and modification time when its content hashed to ContentHash.
type SeenSource struct {
	Size        int64  `json:"size"`
	ModTimeMS   int64  `json:"mtime_ms"`
	ContentHash string `json:"content_hash"`
}

// Seen is the seen file of one checkout. Another checkout of the same
// project (a teammate's machine, a fresh clone) has its own files' times,
// not those the log recorded where the sources were indexed: without it,
// every freshness check there would hash every source, on every claim.
// With it a source is hashed once per change of its file.
type Seen struct {
	Sources map[string]SeenSource `json:"sources"`
	changed bool
}

// LoadSeen reads the seen file of the project at dir; a missing, broken
// or oversized one is an empty cache (it only spares work).
func LoadSeen(dir string) *Seen {
	s := &Seen{Sources: map[string]SeenSource{}}
	b, err := pathcheck.ReadFile(context.Background(), filepath.Join(dir, pathcheck.StateDir, SeenFile), seenCap)
	if err != nil || json.Unmarshal(b, s) != nil || s.Sources == nil {
		return &Seen{Sources: map[string]SeenSource{}}
	}
	return s
}

// Save writes the seen file of the project at dir when it changed
// (atomically). A failure is returned for the caller to ignore or report:
// the cache is an optimisation, never a condition of an answer.
func (s *Seen) Save(dir string) error {
	if s == nil || !s.changed {
		return nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := pathcheck.WriteFile(filepath.Join(dir, pathcheck.StateDir, SeenFile), b, 0o644, true); err != nil {
		return err
	}
	s.changed = false
	return nil
}

// fresh reports whether this checkout already found path, at this size
// and time, to hash to hash.
func (s *Seen) fresh(path string, size, mtimeMS int64, hash string) bool {
	if s == nil {
		return false
	}
	got, ok := s.Sources[path]
	return ok && got.Size == size && got.ModTimeMS == mtimeMS && got.ContentHash == hash
}

// see records that path, at this size and time, hashed to hash.
func (s *Seen) see(path string, size, mtimeMS int64, hash string) {
	if s == nil || s.fresh(path, size, mtimeMS, hash) {
		return
	}
	s.Sources[path] = SeenSource{Size: size, ModTimeMS: mtimeMS, ContentHash: hash}
	s.changed = true
}
