package anchor

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/process"
	"github.com/awr-dev/awr/internal/repo"
)

// Repo is the git repository anchors are recorded in: the one that
// holds the project directory.
type Repo struct {
	Top string
}

// gitEnvForAnchors is the environment git runs with: variables that would
// point it at another repository (a git hook sets GIT_DIR) are dropped, so
// the repository is always the one holding the project directory.
func gitEnvForAnchors() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
			"GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX", "LC_ALL", "GIT_TERMINAL_PROMPT", "GIT_NOTES_REF":
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
}

// runGit runs git -C dir args with stdin, returning stdout; a non-zero
// exit is an error carrying git's trimmed stderr.
func runGit(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{"-C", dir}, repo.SafeConfig()...), args...)...)
	cmd.Env = gitEnvForAnchors()
	cmd.Stdin = stdin
	return process.Run(cmd)
}

// OpenRepo returns the repository holding dir. Errors: InvalidInput when
// dir is not in a git repository (or git is missing), with the hint of a
// file witness.
func OpenRepo(ctx context.Context, dir, op string) (*Repo, error) {
	out, err := runGit(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		hint := "awr anchor --to FILE"
		if op == "verify" {
			hint = "awr verify --anchors FILE"
		}
		return nil, fault.New(fault.InvalidInput, "%s: the project %s is not in a git repository (%s), so it has no git notes to hold anchors", op, dir, err).
			With("path", dir).WithHint("%s", hint)
	}
	return &Repo{Top: strings.TrimSpace(string(out))}, nil
}

// AppendNote appends line to the note under refs/notes/awr on the HEAD
// commit (keeping what the note holds) and returns the commit and the
// line's number in the note. Errors: InvalidInput when the repository has
// no commit; Storage when git cannot write the note.
func (g *Repo) AppendNote(ctx context.Context, line string) (string, int, error) {
	out, err := runGit(ctx, g.Top, nil, "rev-parse", "--verify", "-q", "HEAD^{commit}")
	if err != nil {
		return "", 0, fault.New(fault.InvalidInput, "anchor: the repository %s has no commit yet to hold a git note", g.Top).
			With("repository", g.Top).WithHint("awr anchor --to FILE")
	}
	commit := strings.TrimSpace(string(out))
	// The note is read, then written whole: anchors taken at once (a git
	// hook and a host hook) take turns, so none loses the other's line.
	gitDir, err := runGit(ctx, g.Top, nil, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return "", 0, fault.New(fault.Storage, "anchor: git cannot name the repository's directory in %s: %s", g.Top, err).
			With("repository", g.Top).WithHint("awr anchor --to FILE")
	}
	unlock, err := pathcheck.Lock(filepath.Join(strings.TrimSpace(string(gitDir)), "awr-notes.lock"), "anchor: lock the notes of")
	if err != nil {
		return "", 0, err
	}
	defer unlock()
	existing, err := runGit(ctx, g.Top, nil, "notes", "--ref="+NotesRef, "show", commit)
	if err != nil {
		existing = nil // no note on this commit yet
	}
	note := strings.TrimRight(string(existing), "\n")
	if note != "" {
		note += "\n"
	}
	note += line + "\n"
	if _, err := runGit(ctx, g.Top, strings.NewReader(note), "notes", "--ref="+NotesRef, "add", "-f", "-F", "-", commit); err != nil {
		return "", 0, fault.New(fault.Storage, "anchor: git could not write the note on %s in %s: %s", commit, g.Top, err).
			With("repository", g.Top).WithHint("awr anchor --to FILE")
	}
	return commit, strings.Count(note, "\n"), nil
}

// ReadNotes returns the anchors of every note under refs/notes/awr, over
// all commits (a repository without the ref has none).
func (g *Repo) ReadNotes(ctx context.Context) ([]Anchor, []string, error) {
	list, err := runGit(ctx, g.Top, nil, "notes", "--ref="+NotesRef, "list")
	if err != nil {
		// No notes ref yet: git lists nothing (some versions fail).
		if _, rerr := runGit(ctx, g.Top, nil, "rev-parse", "--verify", "-q", NotesRef); rerr != nil {
			return nil, nil, nil
		}
		return nil, nil, fault.New(fault.Storage, "verify: git notes --ref=%s list in %s: %s", NotesRef, g.Top, err)
	}
	type note struct{ blob, commit string }
	var notes []note
	var batch strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		notes = append(notes, note{f[0], f[1]})
		batch.WriteString(f[0] + "\n")
	}
	if len(notes) == 0 {
		return nil, nil, nil
	}
	out, err := runGit(ctx, g.Top, strings.NewReader(batch.String()), "cat-file", "--batch")
	if err != nil {
		return nil, nil, fault.New(fault.Storage, "verify: git cat-file in %s: %s", g.Top, err)
	}
	rd := bufio.NewReader(bytes.NewReader(out))
	var all []Anchor
	var bad []string
	for _, n := range notes {
		header, err := rd.ReadString('\n')
		f := strings.Fields(header)
		if err != nil || len(f) != 3 {
			return nil, nil, fault.New(fault.Storage, "verify: git cat-file in %s: unexpected output for note %s", g.Top, n.blob)
		}
		size, _ := strconv.Atoi(f[2])
		body := make([]byte, size+1) // the content and its trailing newline
		if _, err := io.ReadFull(rd, body); err != nil {
			return nil, nil, fault.New(fault.Storage, "verify: git cat-file in %s: short note %s", g.Top, n.blob)
		}
		a, b := Parse(body[:size], fmt.Sprintf("git:%s", n.commit))
		all, bad = append(all, a...), append(bad, b...)
	}
	return all, bad, nil
}
