package repo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MaxCommits is the most commits a Comparison lists.
const MaxCommits = 20

// The statuses a Comparison carries.
const (
	CompareUnchanged    = "unchanged"
	CompareChanged      = "changed"
	CompareUnverifiable = "unverifiable"
)

// Comparison is a recorded state compared with the repository now.
type Comparison struct {
	Status          string   `json:"status"`           // "unchanged", "changed" or "unverifiable"
	Reason          string   `json:"reason,omitempty"` // why unverifiable, or why part of a "changed" comparison is missing
	RecordedHead    string   `json:"recorded_head,omitempty"`
	CurrentHead     string   `json:"current_head,omitempty"`
	HeadMoved       bool     `json:"head_moved"`
	HeadRewritten   bool     `json:"head_rewritten"`         // the recorded head is not an ancestor of the current one, or is unknown to the repository
	HeadUnknown     bool     `json:"head_unknown,omitempty"` // the recorded head is not in the repository (so HeadRewritten is set and commit changes are missing)
	CommitsBetween  int      `json:"commits_between"`        // commits in recorded..current (0 when rewritten or unknown)
	Commits         []Commit `json:"commits,omitempty"`      // newest first, at most MaxCommits
	BranchChanged   bool     `json:"branch_changed"`
	WorktreeChanged bool     `json:"worktree_changed"` // the dirty fingerprint differs
	FilesChanged    []File   `json:"files_changed,omitempty"`
	FilesTruncated  bool     `json:"files_truncated,omitempty"`
}

// Commit is one commit between a recorded head and the current one.
type Commit struct {
	Sha     string `json:"sha"`              // the first 12 hex digits of the commit id
	Author  string `json:"author,omitempty"` // the author's name (no address)
	Subject string `json:"subject"`
}

// Compare captures dir now and compares it with recorded. It never fails:
// git missing, dir not a work tree, or git erroring give Status
// "unverifiable" with a Reason.
//
// A recorded head the repository does not know (history rewritten and
// collected, a shallow clone, another repository) is not unverifiable when the
// current state can be captured: it is a change. The Comparison has Status
// "changed", HeadMoved, HeadRewritten and HeadUnknown set, CommitsBetween 0,
// a Reason naming the unknown head, and FilesChanged holding only the
// differences in dirty files (the commit side cannot be computed).
func Compare(ctx context.Context, dir string, recorded *State) Comparison {
	return defaultRunner.compare(ctx, dir, recorded)
}

// CompareWith is Compare against an already captured current state now, so
// one capture serves several comparisons. It never fails, as Compare.
func CompareWith(ctx context.Context, dir string, recorded, now *State) Comparison {
	return defaultRunner.compareWith(ctx, dir, recorded, now)
}

func (r runner) compare(ctx context.Context, dir string, recorded *State) Comparison {
	if recorded == nil {
		return unverifiedComparison(nil, errors.New("repo compare: no recorded state"))
	}
	now, err := r.capture(ctx, dir, false)
	if err != nil {
		return unverifiedComparison(recorded, err)
	}
	return r.compareWith(ctx, dir, recorded, now)
}

func unverifiedComparison(recorded *State, err error) Comparison {
	c := Comparison{Status: CompareUnverifiable, Reason: err.Error()}
	if recorded != nil {
		c.RecordedHead = recorded.Head
	}
	return c
}

func (r runner) compareWith(ctx context.Context, dir string, recorded, now *State) Comparison {
	const op = "repo compare"
	if recorded == nil || now == nil {
		return unverifiedComparison(recorded, errors.New(op+": no recorded or current state"))
	}
	c := Comparison{
		RecordedHead:    recorded.Head,
		CurrentHead:     now.Head,
		HeadMoved:       recorded.Head != now.Head,
		BranchChanged:   recorded.Branch != now.Branch,
		WorktreeChanged: recorded.DirtyFingerprint != now.DirtyFingerprint,
	}
	for _, h := range []string{recorded.Head, now.Head} {
		if h != "" && !isHexID(h) {
			return unverifiedComparison(recorded, fmt.Errorf("%s: invalid commit id %q", op, h))
		}
	}
	if !c.HeadMoved && !c.BranchChanged && !c.WorktreeChanged {
		c.Status = CompareUnchanged
		return c
	}
	c.Status = CompareChanged
	t, err := r.treeOf(ctx, dir, now)
	if err != nil {
		return unverifiedComparison(recorded, unverifiable(op, err))
	}
	commitsKnown := true
	if c.HeadMoved {
		switch {
		case now.Head == "":
			// An unborn branch now (git checkout --orphan): nothing of
			// the recorded history is reachable from HEAD.
			c.HeadRewritten = true
		case recorded.Head == "":
			// The first commits of a repository recorded unborn.
			err = r.commitsBetween(ctx, t, &c, now.Head)
		default:
			err = r.headHistory(ctx, t, &c, recorded.Head, now.Head)
		}
		if err != nil {
			return unverifiedComparison(recorded, unverifiable(op, err))
		}
		commitsKnown = !c.HeadUnknown
	}
	files, truncated, err := r.changes(ctx, t, recorded, now, commitsKnown)
	if err != nil {
		return unverifiedComparison(recorded, unverifiable(op, err))
	}
	c.FilesChanged, c.FilesTruncated = files, truncated
	return c
}

// treeOf is the work tree now was captured in, or the one containing dir for
// a decoded state.
func (r runner) treeOf(ctx context.Context, dir string, now *State) (tree, error) {
	if now.at.root != "" {
		return now.at, nil
	}
	return r.locate(ctx, dir)
}

// pairTree checks two states recorded in dir's repository (neither nil,
// each HEAD a commit id or none) and finds the work tree of the later
// one, to. The error is an *Unverifiable prefixed with op.
func (r runner) pairTree(ctx context.Context, op, dir string, from, to *State) (tree, error) {
	if from == nil || to == nil {
		return tree{}, &Unverifiable{Reason: op + ": missing state"}
	}
	for _, h := range []string{from.Head, to.Head} {
		if h != "" && !isHexID(h) {
			return tree{}, &Unverifiable{Reason: fmt.Sprintf("%s: invalid commit id %q", op, h)}
		}
	}
	t, err := r.treeOf(ctx, dir, to)
	if err != nil {
		return tree{}, unverifiable(op, err)
	}
	return t, nil
}

// headHistory fills the head movement of c from recorded to current, both
// non-empty and different.
func (r runner) headHistory(ctx context.Context, t tree, c *Comparison, recorded, current string) error {
	// One walk answers both questions: the left count is the commits of
	// recorded not in current (zero exactly when recorded is an ancestor),
	// the right count the commits of current not in recorded.
	out, err := r.run(ctx, t.root, nil, "rev-list", "--left-right", "--count", recorded+"..."+current, "--")
	if err != nil {
		known, kerr := r.commitKnown(ctx, t, recorded)
		if kerr != nil {
			return kerr
		}
		if !known {
			c.HeadRewritten, c.HeadUnknown = true, true
			c.Reason = fmt.Sprintf("recorded head %s is not in the repository", recorded)
			return nil
		}
		return err
	}
	left, right, ok := strings.Cut(strings.TrimSpace(string(out)), "\t")
	behind, err1 := strconv.Atoi(left)
	ahead, err2 := strconv.Atoi(right)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("git rev-list: unreadable count %q", out)
	}
	if behind > 0 {
		c.HeadRewritten = true
		return nil
	}
	c.CommitsBetween = ahead
	return r.commitLog(ctx, t, c, recorded+".."+current)
}

// commitsBetween fills c with every commit reachable from current, for a
// recorded state that had no commit.
func (r runner) commitsBetween(ctx context.Context, t tree, c *Comparison, current string) error {
	out, err := r.run(ctx, t.root, nil, "rev-list", "--count", current, "--")
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return fmt.Errorf("git rev-list: unreadable count %q", out)
	}
	c.CommitsBetween = n
	return r.commitLog(ctx, t, c, current)
}

// commitLog lists the newest MaxCommits commits of revs into c.
func (r runner) commitLog(ctx context.Context, t tree, c *Comparison, revs string) error {
	if c.CommitsBetween == 0 {
		return nil
	}
	out, err := r.run(ctx, t.root, nil, "log", "-z", "--no-color", "--no-show-signature", "--format=%H%x00%an%x00%s",
		"--max-count="+strconv.Itoa(MaxCommits), revs, "--")
	if err != nil {
		return err
	}
	recs := splitNUL(out)
	for i := 0; i+2 < len(recs); i += 3 {
		sha := strings.TrimSpace(recs[i])
		if len(sha) > 12 {
			sha = sha[:12]
		}
		c.Commits = append(c.Commits, Commit{Sha: sha, Author: recs[i+1], Subject: recs[i+2]})
	}
	return nil
}

// commitKnown reports whether the repository holds commit id.
func (r runner) commitKnown(ctx context.Context, t tree, id string) (bool, error) {
	_, err := r.run(ctx, t.root, nil, "rev-parse", "--verify", "--quiet", id+"^{commit}")
	return yesNo(err)
}

// yesNo reads the error of a git command that answers by its exit
// status: 0 is true, 1 false, any other failure the error.
func yesNo(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case exitCode(err) == 1:
		return false, nil
	default:
		return false, err
	}
}

// IsAncestor reports whether commit a is an ancestor of (or equal to) b in
// dir's repository. The error is an *Unverifiable when it cannot tell: a
// commit the repository does not know, git missing, dir not a work tree.
func IsAncestor(ctx context.Context, dir, a, b string) (bool, error) {
	return defaultRunner.isAncestor(ctx, dir, a, b)
}

func (r runner) isAncestor(ctx context.Context, dir, a, b string) (bool, error) {
	const op = "repo is-ancestor"
	for _, rev := range []string{a, b} {
		if rev == "" || strings.HasPrefix(rev, "-") {
			return false, &Unverifiable{Reason: fmt.Sprintf("%s: invalid commit %q", op, rev)}
		}
	}
	t, err := r.locate(ctx, dir)
	if err != nil {
		return false, unverifiable(op, err)
	}
	_, err = r.run(ctx, t.root, nil, "merge-base", "--is-ancestor", a, b)
	ok, err := yesNo(err)
	if err != nil {
		return false, unverifiable(op, err)
	}
	return ok, nil
}

// Changes lists the files that changed between a recorded state from and a
// state to, both captured in dir's repository: the files changed by the
// commits between from.Head and to.Head (git diff-tree, renames detected;
// every file of the tree when one side has no commit), and the files whose
// dirty content differs between the two states (dirty in only one, or dirty
// in both with a different blob or status). The result is sorted by path, one
// entry per path, at most MaxFiles; truncated is set when more files changed,
// or when from's dirty list was itself truncated so that the dirty side is
// incomplete.
//
// A File's Status describes to relative to from: a file dirty only in to
// keeps its status; a file dirty only in from and clean in to is "deleted"
// when it had been untracked, added or renamed there, "added" when it had
// been deleted, else "modified"; where a commit and a dirty change both touch
// a path, a deletion in the work tree wins, then an addition or rename by the
// commits; when in doubt the status is "modified". Blob is to's working-tree
// blob where to lists the file dirty, else "".
//
// The error is an *Unverifiable when git cannot answer, as when from.Head is
// unknown to the repository.
func Changes(ctx context.Context, dir string, from, to *State) (files []File, truncated bool, err error) {
	return defaultRunner.changesIn(ctx, dir, from, to)
}

func (r runner) changesIn(ctx context.Context, dir string, from, to *State) ([]File, bool, error) {
	const op = "repo changes"
	t, err := r.pairTree(ctx, op, dir, from, to)
	if err != nil {
		return nil, false, err
	}
	files, truncated, err := r.changes(ctx, t, from, to, true)
	if err != nil {
		return nil, false, unverifiable(op, err)
	}
	return files, truncated, nil
}

// changes computes Changes in a located tree; withCommits false skips the
// commit side (a recorded head the repository does not know).
func (r runner) changes(ctx context.Context, t tree, from, to *State, withCommits bool) ([]File, bool, error) {
	byPath := map[string]File{}
	if withCommits && from.Head != to.Head {
		committed, err := r.commitChanges(ctx, t, from.Head, to.Head)
		if err != nil {
			return nil, false, err
		}
		for _, f := range committed {
			byPath[f.Path] = f
		}
	}
	fromDirty, toDirty := dirtyMap(from), dirtyMap(to)
	for p, ff := range fromDirty {
		if tf, ok := toDirty[p]; ok {
			if tf.Blob != ff.Blob || tf.Status != ff.Status || tf.From != ff.From {
				merge(byPath, File{Path: p, Status: dirtyBothStatus(ff.Status, tf.Status), Blob: tf.Blob, From: tf.From}, true)
			}
			continue
		}
		merge(byPath, File{Path: p, Status: dirtyGoneStatus(ff.Status)}, false)
	}
	for p, tf := range toDirty {
		if _, ok := fromDirty[p]; !ok {
			merge(byPath, tf, true)
		}
	}
	files := make([]File, 0, len(byPath))
	for _, f := range byPath {
		files = append(files, f)
	}
	sortFiles(files)
	files, truncated := capFiles(files)
	return files, truncated || from.DirtyTruncated && from.all == nil, nil
}

// dirtyMap indexes the dirty files of s: every file when s came from
// Capture, else the recorded (possibly truncated) list.
func dirtyMap(s *State) map[string]File {
	list := s.all
	if list == nil {
		list = s.DirtyFiles
	}
	m := make(map[string]File, len(list))
	for _, f := range list {
		m[f.Path] = f
	}
	return m
}

// merge adds the dirty change d to byPath, which may already hold the
// commit change of the same path. inTo says whether d is dirty in to (so it
// describes the work tree now) rather than dirty only in from.
func merge(byPath map[string]File, d File, inTo bool) {
	c, ok := byPath[d.Path]
	if !ok {
		byPath[d.Path] = d
		return
	}
	if !inTo {
		// Clean now: the commits describe what became of the path.
		return
	}
	switch {
	case d.Status == c.Status:
	case d.Status == StatusDeleted:
		c.Status = StatusDeleted
	case c.Status == StatusAdded || c.Status == StatusRenamed:
	default:
		c.Status = StatusModified
	}
	c.Blob = d.Blob
	byPath[d.Path] = c
}

// dirtyBothStatus is the status of a path dirty in both states with
// different content.
func dirtyBothStatus(from, to string) string {
	switch {
	case to == StatusDeleted || to == StatusConflicted || to == StatusTypechange:
		return to
	case from == StatusDeleted:
		return StatusAdded
	default:
		return StatusModified
	}
}

// dirtyGoneStatus is the status of a path dirty in from and clean in to,
// untouched by the commits between.
func dirtyGoneStatus(from string) string {
	switch from {
	case StatusUntracked, StatusAdded, StatusRenamed:
		return StatusDeleted
	case StatusDeleted:
		return StatusAdded
	default:
		return StatusModified
	}
}

// commitChanges lists the files that differ between the trees of commits
// from and to; one of them may be "" (no commit), listing every file of the
// other.
func (r runner) commitChanges(ctx context.Context, t tree, from, to string) ([]File, error) {
	if from == "" || to == "" {
		rev, status := to, StatusAdded
		if to == "" {
			rev, status = from, StatusDeleted
		}
		out, err := r.run(ctx, t.root, nil, "ls-tree", "-r", "-z", "--name-only", "--full-tree", rev)
		if err != nil {
			return nil, err
		}
		var files []File
		for _, p := range splitNUL(out) {
			files = append(files, File{Path: p, Status: status})
		}
		return files, nil
	}
	out, err := r.run(ctx, t.root, nil, "diff-tree", "-r", "-z", "-M", "--name-status", "--no-commit-id", from, to, "--")
	if err != nil {
		return nil, err
	}
	recs := splitNUL(out)
	var files []File
	for i := 0; i < len(recs); i++ {
		code := recs[i]
		if code == "" || i+1 >= len(recs) {
			return nil, fmt.Errorf("git diff-tree: unreadable output")
		}
		switch code[0] {
		case 'R', 'C':
			if i+2 >= len(recs) {
				return nil, fmt.Errorf("git diff-tree: unreadable output")
			}
			status := StatusRenamed
			if code[0] == 'C' {
				status = StatusAdded
			}
			files = append(files, File{Path: recs[i+2], Status: status, From: recs[i+1]})
			i += 2
		default:
			files = append(files, File{Path: recs[i+1], Status: treeStatus(code[0])})
			i++
		}
	}
	return files, nil
}

// treeStatus maps a diff-tree --name-status letter to a status.
func treeStatus(c byte) string {
	switch c {
	case 'A':
		return StatusAdded
	case 'D':
		return StatusDeleted
	case 'T':
		return StatusTypechange
	case 'U':
		return StatusConflicted
	default:
		return StatusModified
	}
}
