package anchor

import (
	"context"
	"fmt"
)

// Recorded is `awr anchor`: the anchor recorded and where.
type Recorded struct {
	// ProjectRevision is the revision anchored (the anchor's seq), as every
	// answer says which revision it reflects.
	ProjectRevision int64 `json:"project_revision"`
	Anchor
	// To is "git" or "file".
	To string `json:"to"`
	// Line is the anchor's line as recorded.
	Line string `json:"line"`
	// Repository, Commit and Ref say where a git anchor went.
	Repository string `json:"repository,omitempty"`
	Commit     string `json:"commit,omitempty"`
	Ref        string `json:"ref,omitempty"`
	// File and FileLine say where a file anchor went.
	File     string `json:"file,omitempty"`
	FileLine int    `json:"file_line,omitempty"`
	Next     string `json:"next"`
}

// Record records a outside the database: with file "" as a line of the
// git note (NotesRef) on the HEAD commit of the repository holding dir,
// appended to a note already there; otherwise as a line appended to file
// (AppendFile: an absolute path the caller checked).
// Errors: InvalidInput when file is "" and dir is not in a git repository
// or its repository has no commit (OpenRepo); Storage when git or the
// file cannot be written.
func Record(ctx context.Context, dir, file string, a Anchor) (*Recorded, error) {
	res := &Recorded{ProjectRevision: a.Seq, Anchor: a, Line: a.Line(), Next: "awr verify --anchors"}
	if file == "" {
		g, err := OpenRepo(ctx, dir, "anchor")
		if err != nil {
			return nil, err
		}
		commit, line, err := g.AppendNote(ctx, res.Line)
		if err != nil {
			return nil, err
		}
		res.To, res.Repository, res.Commit, res.Ref = "git", g.Top, commit, NotesRef
		res.Where = fmt.Sprintf("git:%s:%d", commit, line)
		return res, nil
	}
	line, err := AppendFile(ctx, file, res.Line)
	if err != nil {
		return nil, err
	}
	res.To, res.File, res.FileLine = "file", file, line
	res.Where = fmt.Sprintf("%s:%d", file, line)
	res.Next = "awr verify --anchors " + file
	return res, nil
}

// Load reads the anchors of file (ReadFile: an absolute path the caller
// checked, read as op), or with file "" those of the git notes
// (NotesRef) of the repository holding dir, and names where they came
// from (source).
// Errors: InvalidInput for a file that cannot be read or, for git, a dir
// outside a git repository.
func Load(ctx context.Context, op, dir, file string) (source string, anchors []Anchor, malformed []string, err error) {
	if file == "" {
		g, err := OpenRepo(ctx, dir, op)
		if err != nil {
			return "", nil, nil, err
		}
		anchors, malformed, err = g.ReadNotes(ctx)
		return "git:" + g.Top + " " + NotesRef, anchors, malformed, err
	}
	anchors, malformed, err = ReadFile(ctx, op, dir, file)
	return file, anchors, malformed, err
}
