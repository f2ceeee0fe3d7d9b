package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/internal/secret"
)

// Bounds of a WorkDiff: the files it shows, the bytes of each side it
// reads, the lines it compares line by line and the diff lines it keeps
// per file and in all.
const (
	MaxDiffFiles     = 20
	MaxDiffBytes     = 256 << 10
	maxDiffCompare   = 1000
	MaxDiffFileLines = 24
	MaxDiffLines     = 80
)

// FileDiff is one file of the worktree whose content differs from what a
// recorded state saw: the work nobody recorded since. Base is where the
// recorded content is kept (a blob id the repository holds, "HEAD:path"
// of the recorded head, or "" for a file the recorded state did not
// have); Lines is a unified diff body (" ", "-", "+" lines and "@@"
// hunk headers) from the recorded content to the worktree's, cut at
// MaxDiffFileLines; Note says why there is no diff (binary, too large,
// recorded content not kept).
type FileDiff struct {
	Path      string   `json:"path"`
	Status    string   `json:"status"`
	Base      string   `json:"base,omitempty"`
	Added     int      `json:"added"`
	Removed   int      `json:"removed"`
	Lines     []string `json:"lines,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// WorkDiff lists the files of dir's worktree (as now captured it) whose
// uncommitted content differs from what recorded saw: a file dirty now
// with another content than recorded's dirty content (or dirty now and
// clean then, compared with the recorded head's version), and a file
// dirty then and now clean with other content than recorded's (its edit
// reverted, or committed changed). A file whose content now is exactly
// what recorded saw is not listed, wherever it is (committed as it was,
// or still dirty). Committed changes alone are not the worktree's: a
// path clean in both states is never listed. Each file carries a diff
// from the recorded content: the blob recorded (readable when the
// checkpoint kept it, CaptureKept), else the recorded head's version.
// At most MaxDiffFiles files, in path order; truncated says more differ.
// The error is an *Unverifiable when git cannot answer.
func WorkDiff(ctx context.Context, dir string, recorded, now *State) (diffs []FileDiff, truncated bool, err error) {
	return defaultRunner.workDiff(ctx, dir, recorded, now)
}

func (r runner) workDiff(ctx context.Context, dir string, recorded, now *State) ([]FileDiff, bool, error) {
	const op = "repo work diff"
	t, err := r.pairTree(ctx, op, dir, recorded, now)
	if err != nil {
		return nil, false, err
	}
	format := t.format
	then, cur := dirtyMap(recorded), dirtyMap(now)
	paths := map[string]bool{}
	for p := range then {
		paths[p] = true
	}
	for p := range cur {
		paths[p] = true
	}
	var out []FileDiff
	truncated := false
	for _, p := range sortedPaths(paths) {
		tf, wasDirty := then[p]
		nf, isDirty := cur[p]
		if wasDirty && isDirty && tf.Blob == nf.Blob && tf.Status == nf.Status {
			continue
		}
		if len(out) == MaxDiffFiles {
			truncated = true
			break
		}
		d := FileDiff{Path: p, Status: nf.Status}
		switch {
		case !isDirty:
			d.Status = dirtyGoneStatus(tf.Status)
		case wasDirty:
			d.Status = dirtyBothStatus(tf.Status, nf.Status)
		}
		// The content the recorded state saw.
		var base []byte
		baseKnown := true
		switch {
		case wasDirty && tf.Status == StatusDeleted:
		case wasDirty && tf.Blob != "":
			d.Base = tf.Blob
			base, baseKnown, err = r.object(ctx, t, tf.Blob)
		case wasDirty:
			baseKnown = false // a directory, a submodule: no blob recorded
		case recorded.Head != "":
			d.Base = "HEAD:" + p
			base, baseKnown, err = r.object(ctx, t, recorded.Head+":"+p)
			if err == nil && !baseKnown {
				d.Base, baseKnown = "", true // not in the recorded head: a new file
			}
		}
		if err != nil {
			return nil, false, unverifiable(op, err)
		}
		// The content of the worktree now.
		cur, present, big, err := readWorktree(t, p)
		if err != nil {
			return nil, false, unverifiable(op, err)
		}
		if wasDirty && present && !big && tf.Blob != "" && blobID(format, cur) == tf.Blob {
			continue // exactly what was recorded (committed as it was)
		}
		if baseKnown && !big && len(base) <= MaxDiffBytes && bytes.Equal(base, cur) && (present || d.Base == "") {
			continue // the same content, only its git status moved (staged, reset)
		}
		switch {
		case !baseKnown && d.Base != "":
			d.Note = "the recorded content (" + shortID(d.Base) + ") is not in the repository: the checkpoint did not keep it"
		case !baseKnown:
			d.Note = "no recorded content to compare with"
		case big || len(base) > MaxDiffBytes:
			d.Note = "too large to show a diff"
		case isBinary(base) || isBinary(cur):
			d.Note = "binary content differs"
		default:
			d.Lines, d.Added, d.Removed, d.Truncated = unifiedDiff(base, cur, MaxDiffFileLines)
		}
		out = append(out, d)
	}
	return out, truncated, nil
}

// object reads the blob named by spec (an id, or COMMIT:PATH) when it
// exists and is at most MaxDiffBytes; known is false when the repository
// does not hold it.
func (r runner) object(ctx context.Context, t tree, spec string) (content []byte, known bool, err error) {
	size, err := r.run(ctx, t.root, nil, "cat-file", "-s", spec)
	if err != nil {
		if exitCode(err) > 0 {
			return nil, false, nil
		}
		return nil, false, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(size)))
	if err != nil {
		return nil, false, fmt.Errorf("git cat-file: unreadable size %q", size)
	}
	if n > MaxDiffBytes {
		return make([]byte, MaxDiffBytes+1), true, nil
	}
	out, err := r.run(ctx, t.root, nil, "cat-file", "blob", spec)
	if err != nil {
		if exitCode(err) > 0 {
			return nil, false, nil // not a blob (a tree, a submodule)
		}
		return nil, false, err
	}
	return out, true, nil
}

// readWorktree reads path in the work tree, at most MaxDiffBytes: a
// regular file's content, a symbolic link's target; present is false for
// a missing file, big true beyond the bound.
func readWorktree(t tree, path string) (content []byte, present, big bool, err error) {
	full := filepath.Join(t.root, filepath.FromSlash(path))
	fi, err := os.Lstat(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, false, nil
	}
	if err != nil {
		return nil, false, false, err
	}
	switch mode := fi.Mode(); {
	case mode&fs.ModeSymlink != 0:
		target, err := os.Readlink(full)
		return []byte(filepath.ToSlash(target)), true, false, err
	case !mode.IsRegular():
		return nil, false, false, nil
	case fi.Size() > MaxDiffBytes:
		return nil, true, true, nil
	}
	f, err := os.Open(full)
	if err != nil {
		return nil, false, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxDiffBytes+1))
	if err != nil {
		return nil, false, false, err
	}
	return b, true, len(b) > MaxDiffBytes, nil
}

func isBinary(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }

func shortID(s string) string {
	if isHexID(s) && len(s) > 12 {
		return s[:12]
	}
	return s
}

func sortedPaths(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// splitLines splits content into lines without their newline; a final
// line without one is kept.
func splitLines(b []byte) []string {
	s := string(b)
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// unifiedDiff is the unified diff body (one line of context) from a to
// b, its first max lines, the lines added and removed, and whether it was
// cut. Each line passes secret.Redact. The common head and tail are set aside first; what remains is
// compared line by line (longest common subsequence) when both sides are
// at most maxDiffCompare lines, else shown as removed then added.
func unifiedDiff(a, b []byte, max int) (lines []string, added, removed int, cut bool) {
	x, y := splitLines(a), splitLines(b)
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	mx, my := x[pre:len(x)-suf], y[pre:len(y)-suf]
	// ops: ' ' common, '-' removed, '+' added, over the middle.
	type op struct {
		kind byte
		text string
	}
	var ops []op
	if len(mx) <= maxDiffCompare && len(my) <= maxDiffCompare {
		n, m := len(mx), len(my)
		lcs := make([][]int32, n+1)
		for i := range lcs {
			lcs[i] = make([]int32, m+1)
		}
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if mx[i] == my[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max32(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && mx[i] == my[j]:
				ops = append(ops, op{' ', mx[i]})
				i, j = i+1, j+1
			case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, op{'-', mx[i]})
				i++
			default:
				ops = append(ops, op{'+', my[j]})
				j++
			}
		}
	} else {
		for _, l := range mx {
			ops = append(ops, op{'-', l})
		}
		for _, l := range my {
			ops = append(ops, op{'+', l})
		}
	}
	// One line of context around the middle.
	if pre > 0 {
		ops = append([]op{{' ', x[pre-1]}}, ops...)
	}
	if suf > 0 {
		ops = append(ops, op{' ', x[len(x)-suf]})
	}
	start := pre
	if pre > 0 {
		start = pre - 1
	}
	var na, nb int
	for _, o := range ops {
		switch o.kind {
		case ' ':
			na, nb = na+1, nb+1
		case '-':
			na, removed = na+1, removed+1
		case '+':
			nb, added = nb+1, added+1
		}
	}
	// As diff -u numbers them: an empty side starts at the line before.
	as, bs := start+1, start+1
	if na == 0 {
		as = start
	}
	if nb == 0 {
		bs = start
	}
	lines = append(lines, fmt.Sprintf("@@ -%d,%d +%d,%d @@", as, na, bs, nb))
	for _, o := range ops {
		if len(lines) == max {
			return lines, added, removed, true
		}
		// A diff is shown, never logged; a credential in it is still
		// not repeated.
		lines = append(lines, string(o.kind)+secret.Redact(o.text))
	}
	return lines, added, removed, false
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}
