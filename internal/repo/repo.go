package repo

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/internal/secret"
)

// MaxFiles is the most files a State, a Changes result or a Comparison lists;
// beyond it the list is cut and a truncated flag set.
const MaxFiles = 200

// The statuses a File carries.
const (
	StatusAdded      = "added"
	StatusModified   = "modified"
	StatusDeleted    = "deleted"
	StatusRenamed    = "renamed"
	StatusUntracked  = "untracked"
	StatusTypechange = "typechange"
	StatusConflicted = "conflicted"
)

// State is a repository as a checkpoint captures it.
type State struct {
	Head             string `json:"head"`                        // full commit sha; "" in a repository with no commit yet
	Branch           string `json:"branch,omitempty"`            // short branch name; "" when HEAD is detached
	Dirty            bool   `json:"dirty"`                       // tracked changes (staged or not) or untracked, non-ignored files
	DirtyFingerprint string `json:"dirty_fingerprint,omitempty"` // "sha256:<hex>" over every dirty file; "" when clean
	DirtyFiles       []File `json:"dirty_files,omitempty"`       // sorted by path, at most MaxFiles
	DirtyTruncated   bool   `json:"dirty_truncated,omitempty"`   // more than MaxFiles dirty files (the fingerprint still covers all)

	// all is every dirty file (non-nil, maybe empty) when the State came
	// from Capture; nil for a decoded State, whose list may be truncated.
	all []File
	// at is the work tree Capture read; zero for a decoded State.
	at tree
}

// File is one path with its git status.
type File struct {
	Path   string `json:"path"`           // slash-separated, relative to the work tree root
	Status string `json:"status"`         // one of: added, modified, deleted, renamed, untracked, typechange, conflicted
	Blob   string `json:"blob,omitempty"` // git blob id of the working-tree content ("" for deleted, directories and unknown)
	From   string `json:"from,omitempty"` // the original path of a renamed (or copied) file
}

// ErrNoGit is the cause of an *Unverifiable when the git binary cannot be run.
var ErrNoGit = errors.New("git not found")

// ErrNotRepo is the cause of an *Unverifiable when the directory is not inside
// a git work tree.
var ErrNotRepo = errors.New("not a git work tree")

// Unverifiable is the error of a state that cannot be read; callers report
// it, never treat it as a pass. Err is ErrNoGit, ErrNotRepo, a context error or
// nil (git failed; Reason carries its standard error).
type Unverifiable struct {
	Reason string
	Err    error
}

// ReasonOf says why a repository could not be read (err from Capture,
// IsAncestor...), in words that name no local path (the reason goes into
// the log).
func ReasonOf(err error) string {
	switch {
	case errors.Is(err, ErrNotRepo):
		return "the working directory is not in a git work tree"
	case errors.Is(err, ErrNoGit):
		return "git is not installed (not on PATH)"
	}
	return secret.Redact(err.Error())
}

// Error returns the reason.
func (e *Unverifiable) Error() string { return e.Reason }

// Unwrap returns the cause, so errors.Is(err, ErrNoGit) and
// errors.Is(err, ErrNotRepo) work.
func (e *Unverifiable) Unwrap() error { return e.Err }

// Capture reads the repository whose work tree contains dir. The error is
// always an *Unverifiable: wrapping ErrNoGit when git cannot be run, ErrNotRepo
// when dir is not inside a work tree, or carrying git's trimmed standard error
// when git fails.
func Capture(ctx context.Context, dir string) (*State, error) {
	return defaultRunner.capture(ctx, dir, false)
}

// CaptureKept is Capture that also writes the content of every dirty
// file into the repository's object database (git hash-object -w), as
// git add would store it but without touching the index: the blob ids
// the State records then name content the repository keeps, so what a
// checkpoint saw in the worktree can be read back (git cat-file -p BLOB)
// after the worktree changed. Unreachable objects last until git gc
// prunes them (two weeks by default). The error is that of Capture.
func CaptureKept(ctx context.Context, dir string) (*State, error) {
	return defaultRunner.capture(ctx, dir, true)
}

// tree is a located work tree.
type tree struct {
	root   string // absolute path of the work tree root
	format string // object format: "sha1" or "sha256"
}

// locate finds the work tree containing dir.
func (r runner) locate(ctx context.Context, dir string) (tree, error) {
	if fi, err := os.Stat(dir); err != nil {
		return tree{}, fmt.Errorf("%w: %s", ErrNotRepo, err)
	} else if !fi.IsDir() {
		return tree{}, fmt.Errorf("%w: %s is not a directory", ErrNotRepo, dir)
	}
	if outsideAnyRepo(dir) {
		return tree{}, fmt.Errorf("%w: %s: no .git in it or in any parent directory", ErrNotRepo, dir)
	}
	out, err := r.run(ctx, dir, nil, "rev-parse", "--is-inside-work-tree", "--show-toplevel", "--show-object-format")
	if err != nil {
		var ge *gitError
		if errors.As(err, &ge) && (strings.Contains(ge.stderr, "not a git repository") || strings.Contains(ge.stderr, "must be run in a work tree")) {
			return tree{}, fmt.Errorf("%w: %s: %s", ErrNotRepo, dir, ge.stderr)
		}
		return tree{}, err
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 3 || lines[0] != "true" {
		return tree{}, fmt.Errorf("%w: %s", ErrNotRepo, dir)
	}
	return tree{root: lines[1], format: lines[2]}, nil
}

// outsideAnyRepo reports, without running git, that git would find no
// repository for dir: none of the variables that point git at one is set,
// and neither dir nor any directory above it, on its path as given or
// with symbolic links resolved (git walks the latter), holds a .git or a
// HEAD (a git directory, or a bare repository). It answers false whenever
// it cannot tell, so that git decides. Outside a repository this saves a
// checkpoint or a session start the two git processes that would only
// say so (13-19 ms of a checkpoint's wall time on the project's box).
func outsideAnyRepo(dir string) bool {
	for _, v := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"} {
		if os.Getenv(v) != "" {
			return false
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return false
	}
	for _, start := range []string{abs, real} {
		for d := start; ; d = filepath.Dir(d) {
			for _, name := range []string{".git", "HEAD"} {
				if _, err := os.Lstat(filepath.Join(d, name)); !errors.Is(err, fs.ErrNotExist) {
					return false // there, or it cannot be told
				}
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return true
}

func (r runner) capture(ctx context.Context, dir string, keep bool) (*State, error) {
	const op = "repo capture"
	// git status needs no work tree root (porcelain paths are always
	// relative to it), so it runs alongside the rev-parse that finds it.
	type located struct {
		t   tree
		err error
	}
	if outsideAnyRepo(dir) {
		// Nothing for git status to read either: no git runs.
		_, err := r.locate(ctx, dir)
		return nil, unverifiable(op, err)
	}
	loc := make(chan located, 1)
	go func() {
		t, err := r.locate(ctx, dir)
		loc <- located{t, err}
	}()
	out, statusErr := r.run(ctx, dir, nil, "status", "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--ignore-submodules=none")
	l := <-loc
	if l.err != nil {
		return nil, unverifiable(op, l.err)
	}
	if statusErr != nil {
		return nil, unverifiable(op, statusErr)
	}
	t := l.t
	st, files, err := parseStatus(out)
	if err != nil {
		return nil, unverifiable(op, err)
	}
	if err := r.hashBlobs(ctx, t, files, keep); err != nil {
		return nil, unverifiable(op, err)
	}
	st.setDirty(files)
	st.at = t
	return st, nil
}

// setDirty records files (sorted by path) as the dirty files of s.
func (s *State) setDirty(files []File) {
	s.all = files
	s.Dirty = len(files) > 0
	s.DirtyFingerprint = fingerprint(files)
	s.DirtyFiles, s.DirtyTruncated = capFiles(files)
	if len(files) == 0 {
		s.DirtyFiles = nil
	}
}

// capFiles returns at most MaxFiles of files and whether it cut any.
func capFiles(files []File) ([]File, bool) {
	if len(files) > MaxFiles {
		return files[:MaxFiles:MaxFiles], true
	}
	return files, false
}

// fingerprint is "sha256:<hex>" over the records path, status, blob and from
// of every file, each field NUL-terminated, in path order; "" for none.
func fingerprint(files []File) string {
	if len(files) == 0 {
		return ""
	}
	h := sha256.New()
	for _, f := range files {
		for _, s := range [...]string{f.Path, f.Status, f.Blob, f.From} {
			h.Write([]byte(s))
			h.Write([]byte{0})
		}
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// parseStatus reads git status --porcelain=v2 -z --branch output into a State
// (head and branch) and the dirty files sorted by path, one per path.
func parseStatus(out []byte) (*State, []File, error) {
	st := &State{}
	byPath := map[string]File{}
	add := func(f File) {
		// A staged deletion of a file that is back in the work tree shows
		// twice, as deleted and as untracked: the untracked entry describes
		// the work tree.
		if old, ok := byPath[f.Path]; ok && f.Status == StatusDeleted && old.Status != StatusDeleted {
			return
		}
		byPath[f.Path] = f
	}
	recs := splitNUL(out)
	for i := 0; i < len(recs); i++ {
		rec := recs[i]
		if rec == "" {
			continue
		}
		switch rec[0] {
		case '#':
			key, val, _ := strings.Cut(strings.TrimPrefix(rec, "# "), " ")
			switch key {
			case "branch.oid":
				if val != "(initial)" {
					st.Head = val
				}
			case "branch.head":
				if val != "(detached)" {
					st.Branch = val
				}
			}
		case '1':
			fields := strings.SplitN(rec, " ", 9)
			if len(fields) != 9 {
				return nil, nil, fmt.Errorf("unreadable status record %q", rec)
			}
			add(File{Path: fields[8], Status: trackedStatus(fields[1])})
		case '2':
			fields := strings.SplitN(rec, " ", 10)
			if len(fields) != 10 || i+1 >= len(recs) {
				return nil, nil, fmt.Errorf("unreadable status record %q", rec)
			}
			i++
			add(File{Path: fields[9], Status: trackedStatus(fields[1]), From: recs[i]})
		case 'u':
			fields := strings.SplitN(rec, " ", 11)
			if len(fields) != 11 {
				return nil, nil, fmt.Errorf("unreadable status record %q", rec)
			}
			add(File{Path: fields[10], Status: StatusConflicted})
		case '?':
			add(File{Path: strings.TrimPrefix(rec, "? "), Status: StatusUntracked})
		case '!':
			// Ignored files are not dirty.
		default:
			return nil, nil, fmt.Errorf("unreadable status record %q", rec)
		}
	}
	files := make([]File, 0, len(byPath))
	for _, f := range byPath {
		if f.Status != StatusRenamed && f.Status != StatusAdded {
			f.From = ""
		}
		files = append(files, f)
	}
	sortFiles(files)
	return st, files, nil
}

// trackedStatus maps a porcelain v2 XY field of a tracked entry to a status.
func trackedStatus(xy string) string {
	if len(xy) != 2 {
		return StatusModified
	}
	x, y := xy[0], xy[1]
	switch {
	case x == 'U' || y == 'U' || xy == "AA" || xy == "DD":
		return StatusConflicted
	case x == 'D' || y == 'D':
		return StatusDeleted
	case x == 'R':
		return StatusRenamed
	case x == 'A' || x == 'C':
		return StatusAdded
	case x == 'T' || y == 'T':
		return StatusTypechange
	default:
		return StatusModified
	}
}

func sortFiles(files []File) {
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
}

// hashBlobs fills in the blob id of every dirty file present in the work
// tree: regular files through one git hash-object --stdin-paths (with the
// repository's filters, as git add would store them), symbolic links over
// their target. Directories and other kinds get no blob. With keep, the
// regular files' content is written into the object database.
func (r runner) hashBlobs(ctx context.Context, t tree, files []File, keep bool) error {
	var stdin bytes.Buffer
	var regular []int
	for i := range files {
		f := &files[i]
		if f.Status == StatusDeleted {
			continue
		}
		full := filepath.Join(t.root, filepath.FromSlash(f.Path))
		fi, err := os.Lstat(full)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		switch mode := fi.Mode(); {
		case mode.IsRegular():
			regular = append(regular, i)
			stdin.WriteString(stdinPath(f.Path))
			stdin.WriteByte('\n')
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(full)
			if err != nil {
				return err
			}
			f.Blob = blobID(t.format, []byte(filepath.ToSlash(target)))
		}
	}
	if len(regular) == 0 {
		return nil
	}
	args := []string{"hash-object", "--stdin-paths"}
	if keep {
		args = []string{"hash-object", "-w", "--stdin-paths"}
	}
	out, err := r.run(ctx, t.root, &stdin, args...)
	if err != nil {
		return err
	}
	ids := strings.Fields(string(out))
	if len(ids) != len(regular) {
		return fmt.Errorf("git hash-object: %d ids for %d files", len(ids), len(regular))
	}
	for k, i := range regular {
		files[i].Blob = ids[k]
	}
	return nil
}

// stdinPath writes path as git hash-object --stdin-paths reads it: verbatim,
// or C-quoted when it holds a control character (a newline, a trailing
// carriage return) or starts with a double quote.
func stdinPath(path string) string {
	needs := strings.HasPrefix(path, `"`)
	for i := 0; i < len(path) && !needs; i++ {
		needs = path[i] < 0x20 || path[i] == 0x7f
	}
	if !needs {
		return path
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\` + fmt.Sprintf("%03o", c))
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// blobID is the id git gives a blob holding content in the given object
// format.
func blobID(format string, content []byte) string {
	var h hash.Hash
	if format == "sha256" {
		h = sha256.New()
	} else {
		h = sha1.New()
	}
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// Recorded returns what a log records of s, as a decode of the record
// gives it back: the exported fields alone (not the capture's list of
// every dirty file nor the work tree it read), with nil for an empty file
// list. A command appends Recorded, so the projectors it feeds see what a
// replay sees.
func (s *State) Recorded() *State {
	if s == nil {
		return nil
	}
	out := &State{Head: s.Head, Branch: s.Branch, Dirty: s.Dirty, DirtyFingerprint: s.DirtyFingerprint, DirtyFiles: s.DirtyFiles, DirtyTruncated: s.DirtyTruncated}
	if len(out.DirtyFiles) == 0 {
		out.DirtyFiles = nil
	}
	return out
}

// RelPath returns dir relative to the root of the work tree s was captured
// in, slash-separated; ok is false for a decoded State and for a dir
// outside that work tree.
func (s *State) RelPath(dir string) (rel string, ok bool) {
	if s.at.root == "" {
		return "", false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	root := s.at.root
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if a, err := filepath.EvalSymlinks(abs); err == nil {
		abs = a
	}
	r, err := filepath.Rel(root, abs)
	if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// Without returns s without the dirty files at or under prefix (a
// slash-separated path relative to the work tree root), its dirty flag and
// fingerprint recomputed over the files that remain. It returns s itself
// when no file is under prefix, and when s is a decoded State whose list
// was truncated (its fingerprint cannot be recomputed).
func (s *State) Without(prefix string) *State {
	prefix = strings.TrimSuffix(prefix, "/")
	if s == nil || prefix == "" || prefix == "." {
		return s
	}
	files := s.all
	if files == nil {
		if s.DirtyTruncated {
			return s
		}
		files = s.DirtyFiles
	}
	var kept []File
	for _, f := range files {
		if f.Path == prefix || strings.HasPrefix(f.Path, prefix+"/") {
			continue
		}
		kept = append(kept, f)
	}
	if len(kept) == len(files) {
		return s
	}
	out := &State{Head: s.Head, Branch: s.Branch, at: s.at}
	if kept == nil {
		kept = []File{}
	}
	out.setDirty(kept)
	return out
}

// CaptureWithout is Capture of dir with the directory exclude (an awr
// project's .awr) left out of the dirty files, so awr's own writes never
// read as a change to the work. rel is exclude relative to the work tree
// root ("" when it lies outside it). Errors: those of Capture.
func CaptureWithout(ctx context.Context, dir, exclude string) (st *State, rel string, err error) {
	st, err = Capture(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	if rel, in := st.RelPath(exclude); in {
		return st.Without(rel), rel, nil
	}
	return st, "", nil
}
