package project

import (
	"context"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/anchor"
)

// The witnesses of `awr verify --anchors` and `awr anchor` (package
// anchor).
type (
	Anchor       = anchor.Anchor
	AnchorCheck  = anchor.Check
	BrokenAnchor = anchor.Broken
	HeadCheck    = anchor.HeadCheck
)

// AnchorNotesRef is the git notes ref anchors are recorded under.
const AnchorNotesRef = anchor.NotesRef

// AnchorRequest is `awr anchor` and awr_anchor.
type AnchorRequest struct {
	To string `name:"to" default:"git" json:"to,omitempty" help:"Where to record the head: git (a note under refs/notes/awr on the project repository's HEAD commit, the default) or a FILE to append one line to (a file named git: ./git)." placeholder:"git|FILE"`
}

// AnchorResult is `awr anchor`: the anchor recorded and where.
type AnchorResult = anchor.Recorded

// Anchor records the log's head outside the database: with To "git" (or
// empty) as a line of the git note (refs/notes/awr) on the HEAD commit of
// the repository holding the project, appended to a note already there;
// otherwise as a line appended to the file To (created if missing,
// opened for appending, synced). A relative file is relative to the
// project directory (the CLI makes it relative to the working directory).
// Errors: InvalidTransition for a log with no event; InvalidInput when To
// is git and the project is not in a git repository or its repository has
// no commit (hint `awr anchor --to FILE`); Storage when git or the file
// cannot be written.
func (p *Project) Anchor(ctx context.Context, req AnchorRequest) (*AnchorResult, error) {
	var a anchor.Anchor
	err := p.read(ctx, Read{}, func(r *events.Reader, rev, _ int64) error {
		var err error
		a, err = anchor.Of(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	a.At = p.opts.Now().UTC().Format(time.RFC3339)
	if req.To == "" || req.To == "git" {
		return anchor.Record(ctx, p.dir, "", a)
	}
	path, err := p.namedPath("anchor", "--to", req.To, "awr anchor --to anchors.txt")
	if err != nil {
		return nil, err
	}
	return anchor.Record(ctx, p.dir, path, a)
}

// loadAnchors reads the anchors of file, or with file "" or "git" those of
// the git notes (refs/notes/awr) of the repository holding the project,
// and names where they came from (source). A relative file is relative to
// the working directory. Errors: InvalidInput for a file that cannot be
// read or, for git, a project outside a git repository.
func (p *Project) loadAnchors(ctx context.Context, op, file string) (source string, anchors []anchor.Anchor, malformed []string, err error) {
	if file == "" || file == "git" {
		return anchor.Load(ctx, op, p.dir, "")
	}
	hint := "awr verify --anchors anchors.txt"
	if op == "import" {
		hint = "awr import EXPORT.jsonl --project NEW_DIR --anchors anchors.txt"
	}
	path, err := p.namedPath(op, "--anchors", file, hint)
	if err != nil {
		return "", nil, nil, err
	}
	return anchor.Load(ctx, op, p.dir, path)
}

// anchorSourceArg is how a hint names the anchors a command read: git,
// the file as given when it lies in the project, anchors.txt otherwise (a
// hint names no path outside the project).
func (p *Project) anchorSourceArg(file string) string {
	if file == "" || file == "git" {
		return "git"
	}
	return p.shown(file, "anchors.txt")
}
