package intake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake/source"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/secret"
	"github.com/awr-dev/awr/projections"
)

// maxSourceSize bounds a source file; larger files are reported, not read.
const maxSourceSize = 16 << 20

// sourceFile checks that rel names a file awr may read as a source of
// the project at dir, and returns its info: once every symbolic link is
// followed it is still inside the project, neither its name nor its
// target's looks like a secret (.env, keys, tokens), and it is a regular
// file (never a FIFO, device or directory, which could block or never
// end) of at most maxSourceSize bytes. A missing file gives an error that
// is os.ErrNotExist.
func sourceFile(dir, rel string) (os.FileInfo, error) {
	full := filepath.Join(dir, filepath.FromSlash(rel))
	if _, err := os.Lstat(full); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	inside, err := filepath.Rel(root, real)
	if err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) || filepath.IsAbs(inside) {
		return nil, fmt.Errorf("it links outside the project (to %s)", real)
	}
	if secretNamed(inside) || secretNamed(rel) {
		return nil, fmt.Errorf("it is or links to a file that looks like a secret (%s); awr never reads it", secret.Redact(filepath.ToSlash(inside)))
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > maxSourceSize {
		return nil, fmt.Errorf("%d bytes is more than the %d a source may have", fi.Size(), maxSourceSize)
	}
	return fi, nil
}

// Hash returns the content hash Read would record for manifest source ms
// of the project at dir, without parsing the file: missing when the file
// is not there, ok false when it cannot be read as a source (Read then
// records why).
func Hash(dir string, ms ManifestSource) (hash string, missing, ok bool) {
	if _, err := sourceFile(dir, ms.Path); errors.Is(err, os.ErrNotExist) {
		return "", true, false
	} else if err != nil {
		return "", false, false
	}
	content, err := readBounded(filepath.Join(dir, filepath.FromSlash(ms.Path)), maxSourceSize)
	if err != nil {
		return "", false, false
	}
	return source.Hash(content), false, true
}

// Read reads and parses one manifest source into the payload of a
// source_indexed event. A missing file is reported through missing; an
// unreadable or oversized one yields a payload whose only content is an
// issue naming it, so that indexing records the problem.
func Read(dir string, ms ManifestSource) (si events.SourceIndexed, missing bool) {
	full := filepath.Join(dir, filepath.FromSlash(ms.Path))
	si = events.SourceIndexed{Path: ms.Path, Adapter: ms.Adapter, Role: ms.Role, OptionsHash: OptionsHash(ms)}
	fi, err := sourceFile(dir, ms.Path)
	if errors.Is(err, os.ErrNotExist) {
		return si, true
	}
	unreadable := func(msg string) (events.SourceIndexed, bool) {
		si.ContentHash = "unreadable"
		si.Issues = []events.SourceIssue{{Code: source.IssueUnreadable, Path: ms.Path, Message: msg}}
		return si, false
	}
	if err != nil {
		return unreadable(err.Error())
	}
	content, err := readBounded(full, maxSourceSize)
	if err != nil {
		return unreadable(err.Error())
	}
	// The hash is the file's; what is parsed has its secrets withheld.
	si.ContentHash = source.Hash(content)
	parsed, withheld, kinds := withholdInContent(ms.Path, content)
	res := source.Parse(ms.Adapter, ms.Path, parsed, ms.Options)
	si.Size, si.ModTimeMS = fi.Size(), fi.ModTime().UnixMilli()
	si.Items, si.Goals, si.Rules = res.Items, res.Goals, res.Rules
	attachWithheld(&si, withheld, kinds)
	si.Issues = append(withheld, res.Issues...)
	withholdSecrets(&si)
	return si, false
}

// Freshness states of a source.
const (
	Fresh   = "fresh"
	Stale   = "stale"
	Missing = "missing"
	New     = "not_indexed"
)

// SourceState is one manifest source compared with what the log holds.
type SourceState struct {
	Path            string `json:"path"`
	Adapter         string `json:"adapter"`
	Role            string `json:"role"`
	ContentHash     string `json:"content_hash"`
	RevisionIndexed int64  `json:"revision_indexed"`
	Items           int    `json:"items"`
	Issues          int    `json:"issues"`
	Freshness       string `json:"freshness"`
}

// Compare reports the freshness of every manifest source against the
// indexed sources: how the manifest says to read it (OptionsHash) first,
// then size and mtime, the content hash only when those differ, so an
// unchanged project costs one stat per source. A source whose adapter,
// role, status_map or field_map changed since it was indexed is stale even
// when its file is not: reindexing it would read it otherwise.
func Compare(dir string, m *Manifest, indexed []projections.Source) []SourceState {
	return CompareSeen(dir, m, indexed, nil)
}

// CompareSeen is Compare that also takes, before hashing a file whose
// size or time differ from those recorded, what this checkout found of it
// before (seen, nil for nothing), and records there each file it hashed
// to the indexed content: on another machine than the one that indexed
// the sources (whose files have other times), a source is hashed once per
// change of its file, not at every check.
func CompareSeen(dir string, m *Manifest, indexed []projections.Source, seen *Seen) []SourceState {
	byPath := map[string]projections.Source{}
	for _, s := range indexed {
		byPath[s.Path] = s
	}
	var out []SourceState
	for _, ms := range m.Sources {
		st := SourceState{Path: ms.Path, Adapter: ms.Adapter, Role: ms.Role}
		idx, ok := byPath[ms.Path]
		if ok {
			st.ContentHash, st.RevisionIndexed, st.Items, st.Issues = idx.ContentHash, idx.Revision, idx.ItemCount, len(idx.Issues)
		}
		full := filepath.Join(dir, filepath.FromSlash(ms.Path))
		fi, err := sourceFile(dir, ms.Path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			st.Freshness = Missing
		case err != nil:
			// Not readable as a source any more (a link out of the
			// project, a FIFO): stale, so a reindex records why.
			st.Freshness = Stale
		case !ok:
			st.Freshness = New
		case idx.OptionsHash != OptionsHash(ms):
			st.Freshness = Stale
		case fi.Size() == idx.Size && fi.ModTime().UnixMilli() == idx.ModTimeMS:
			st.Freshness = Fresh
		case seen.fresh(ms.Path, fi.Size(), fi.ModTime().UnixMilli(), idx.ContentHash):
			st.Freshness = Fresh
		default:
			content, err := readBounded(full, maxSourceSize)
			if err == nil && source.Hash(content) == idx.ContentHash {
				st.Freshness = Fresh
				if time.Since(fi.ModTime()) > racyWindow {
					seen.see(ms.Path, fi.Size(), fi.ModTime().UnixMilli(), idx.ContentHash)
				}
			} else {
				st.Freshness = Stale
			}
		}
		out = append(out, st)
	}
	return out
}

// OptionsHash fingerprints how a source is read: its adapter, role and
// maps. Indexing compares it, with the content hash, to decide whether a
// source changed.
func OptionsHash(ms ManifestSource) string {
	// An empty map reads as no map: the manifest on disk decodes an
	// absent table as nil, a copy of it may hold an empty one.
	orNil := func(m map[string]string) map[string]string {
		if len(m) == 0 {
			return nil
		}
		return m
	}
	if ms.KeyPattern != "" {
		// Only a source that sets key_pattern hashes it, so the sources
		// indexed before it existed keep their hash.
		return events.Fingerprint(struct {
			Adapter    string            `json:"adapter"`
			Role       string            `json:"role"`
			StatusMap  map[string]string `json:"status_map"`
			FieldMap   map[string]string `json:"field_map"`
			KeyPattern string            `json:"key_pattern"`
		}{ms.Adapter, ms.Role, orNil(ms.StatusMap), orNil(ms.FieldMap), ms.KeyPattern})
	}
	return events.Fingerprint(struct {
		Adapter   string            `json:"adapter"`
		Role      string            `json:"role"`
		StatusMap map[string]string `json:"status_map"`
		FieldMap  map[string]string `json:"field_map"`
	}{ms.Adapter, ms.Role, orNil(ms.StatusMap), orNil(ms.FieldMap)})
}

// readBounded reads at most limit bytes of the regular file path, and
// fails on more: a file that grows between its stat and its read is still
// bounded, and a FIFO or a device is refused without waiting on it
// (pathcheck.ReadFile).
func readBounded(path string, limit int64) ([]byte, error) {
	b, err := pathcheck.ReadFile(context.Background(), path, limit)
	var pe *pathcheck.Error
	if errors.As(err, &pe) {
		return nil, errors.New(pe.Why)
	}
	return b, err
}

// ItemChanges are the work items one reindex of a source added, changed
// and removed, by key. A change of the file's content hash or of the
// item's lines alone (the stamp some adapters put in every item's source
// reference, a line added above it) is no change: see Plain.
type ItemChanges struct {
	Path    string   `json:"path"`
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
}

// CompareItems says which items of a source differ between before and
// after, in after's order (removed ones in before's).
func CompareItems(path string, before, after []events.WorkItem) ItemChanges {
	c := ItemChanges{Path: path, Added: []string{}, Changed: []string{}, Removed: []string{}}
	old := map[string]string{}
	for _, it := range before {
		if _, dup := old[it.Key]; !dup {
			old[it.Key] = Plain(it)
		}
	}
	seen := map[string]bool{}
	for _, it := range after {
		if seen[it.Key] {
			continue
		}
		seen[it.Key] = true
		switch o, ok := old[it.Key]; {
		case !ok:
			c.Added = append(c.Added, it.Key)
		case o != Plain(it):
			c.Changed = append(c.Changed, it.Key)
		}
	}
	done := map[string]bool{}
	for _, it := range before {
		if !seen[it.Key] && !done[it.Key] {
			done[it.Key] = true
			c.Removed = append(c.Removed, it.Key)
		}
	}
	return c
}

// Plain is a work item as a reindex compares it, in canonical JSON: its
// source reference without the file's content hash and the item's lines,
// which change for every item of a file when one line above them does
// and say nothing of the item itself (awr diff calls them bookkeeping).
func Plain(it events.WorkItem) string {
	it.Source.ContentHash, it.Source.LineStart, it.Source.LineEnd = "", 0, 0
	b, _ := json.Marshal(it)
	return string(b)
}
