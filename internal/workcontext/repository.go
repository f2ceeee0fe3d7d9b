package workcontext

import (
	"context"
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/projections"
)

// maxPacketFiles bounds the changed files a packet lists by name.
const maxPacketFiles = 20

// RepoCheck is the repository recorded by the latest checkpoint compared
// with the repository now: HEAD moved (old to new, the commits between),
// files changed since the checkpoint, worktree changed. A checkpoint that
// recorded no repository, no git, or git failing give status
// "unverifiable", never a pass.
//
// Unrecorded is the work in the worktree that the checkpoint did not
// record: each uncommitted file whose content differs from what the
// checkpoint saw, with a diff against it (repo.WorkDiff). It is the
// predecessor's unrecorded work, set apart from the commits made since
// (Commits, with their authors), which are others' work or commits the
// checkpoint did not record.
type RepoCheck struct {
	Checkpoint    string      `json:"checkpoint"`
	CheckpointSeq int64       `json:"checkpoint_seq"`
	Recorded      *repo.State `json:"recorded"`
	repo.Comparison
	Unrecorded          []repo.FileDiff `json:"unrecorded_work,omitempty"`
	UnrecordedTruncated bool            `json:"unrecorded_work_truncated,omitempty"`
	// SinceStart names the session whose start the repository is
	// compared with, when its chain recorded no checkpoint yet
	// (Checkpoint is then "").
	SinceStart string `json:"since_session_start,omitempty"`
}

// CheckRepoSinceStart compares the repository session's start recorded
// (no checkpoint of its chain recorded one) with dir's now: everything in
// the worktree since is unrecorded work. Nil when the start recorded no
// readable repository, or when nothing changed since.
func CheckRepoSinceStart(ctx context.Context, dir, session string, start *repo.State) *RepoCheck {
	if start == nil {
		return nil
	}
	c := CheckRepo(ctx, dir, &projections.Checkpoint{Repo: &events.RepoRecord{State: start}})
	if c.Status == repo.CompareUnchanged {
		return nil // nothing done yet: nothing to say
	}
	c.SinceStart = session
	return c
}

// CheckRepo compares checkpoint cp's recorded repository with dir's now:
// the comparison (HEAD, commits, files) and the worktree's unrecorded
// work with its diff. A checkpoint that recorded no repository, or could
// not read it, gives an unverifiable check; git failing too.
func CheckRepo(ctx context.Context, dir string, cp *projections.Checkpoint) *RepoCheck {
	switch {
	case cp.Repo == nil:
		return Unverifiable(cp.ID, cp.Seq, "checkpoint "+cp.ID+" recorded no repository state")
	case cp.Repo.State == nil:
		return Unverifiable(cp.ID, cp.Seq, "checkpoint "+cp.ID+" could not read the repository: "+cp.Repo.Unverifiable)
	}
	c := &RepoCheck{Checkpoint: cp.ID, CheckpointSeq: cp.Seq, Recorded: cp.Repo.State}
	now, err := repo.Capture(ctx, dir)
	if err != nil {
		c.Comparison = repo.Compare(ctx, dir, cp.Repo.State) // unverifiable, with git's reason
		return c
	}
	c.Comparison = repo.CompareWith(ctx, dir, cp.Repo.State, now)
	if c.Status != repo.CompareChanged || !c.WorktreeChanged && !c.HeadMoved {
		return c
	}
	diffs, truncated, err := repo.WorkDiff(ctx, dir, cp.Repo.State, now)
	if err != nil {
		c.Reason = strings.TrimSpace(c.Reason + " unrecorded work: " + err.Error())
		return c
	}
	c.Unrecorded, c.UnrecordedTruncated = diffs, truncated
	return c
}

// Unverifiable is a RepoCheck against checkpoint cp (id, seq) that could
// not be made, and why.
func Unverifiable(cp string, seq int64, reason string) *RepoCheck {
	return &RepoCheck{Checkpoint: cp, CheckpointSeq: seq, Comparison: repo.Comparison{Status: repo.CompareUnverifiable, Reason: reason}}
}

// repositoryLines renders a RepoCheck for the packet.
func repositoryLines(c *RepoCheck) []string {
	lines := []string{fmt.Sprintf("## Repository since checkpoint %s (seq %d)", c.Checkpoint, c.CheckpointSeq)}
	if c.SinceStart != "" {
		lines = []string{fmt.Sprintf("## Repository since session %s started (no checkpoint recorded yet)", c.SinceStart)}
	}
	if c.Status == repo.CompareUnverifiable {
		return append(lines, "UNVERIFIABLE: "+SafeText(c.Reason), "Do not assume the repository is as the checkpoint left it: look (git status, git log).")
	}
	if r := c.Recorded; r != nil {
		state := "clean"
		if r.Dirty {
			state = "dirty (" + plural(len(r.DirtyFiles), "file") + ")"
		}
		lines = append(lines, fmt.Sprintf("Recorded: HEAD %s on %s, worktree %s", short(r.Head), branchName(r.Branch), state))
	}
	if c.Status == repo.CompareUnchanged {
		return append(lines, "Unchanged since the checkpoint: same HEAD, same worktree.")
	}
	if c.SinceStart != "" {
		lines = append(lines, "No checkpoint recorded this work: everything below is unrecorded.")
	}
	switch {
	case c.HeadUnknown:
		lines = append(lines, fmt.Sprintf("HEAD moved %s -> %s: the recorded commit is no longer in the repository (history rewritten)", short(c.RecordedHead), short(c.CurrentHead)))
	case c.HeadRewritten:
		lines = append(lines, fmt.Sprintf("HEAD moved %s -> %s: the recorded commit is not an ancestor of HEAD (reset, rebase or another branch)", short(c.RecordedHead), short(c.CurrentHead)))
	case c.HeadMoved:
		lines = append(lines, fmt.Sprintf("HEAD moved %s -> %s (%s since the checkpoint):", short(c.RecordedHead), short(c.CurrentHead), plural(c.CommitsBetween, "commit")))
		for _, cm := range c.Commits {
			line := "- " + cm.Sha + " " + SafeText(cm.Subject)
			if cm.Author != "" {
				line += " (by " + SafeText(cm.Author) + ")"
			}
			lines = append(lines, line)
		}
		lines = append(lines, "These commits are not recorded by the checkpoint: others' work, or commits made after it.")
	}
	if c.BranchChanged {
		lines = append(lines, "The branch changed since the checkpoint.")
	}
	if c.WorktreeChanged {
		lines = append(lines, "The worktree changed since the checkpoint (its uncommitted content is not what the checkpoint saw).")
	}
	lines = append(lines, unrecordedLines(c)...)
	if n := len(c.FilesChanged); n > 0 {
		lines = append(lines, fmt.Sprintf("Files changed since the checkpoint (%s):", plural(n, "file")))
		for i, f := range c.FilesChanged {
			if i == maxPacketFiles {
				lines = append(lines, fmt.Sprintf("- and %d more", n-maxPacketFiles))
				break
			}
			lines = append(lines, "- "+SafeText(f.Path)+" ("+f.Status+")")
		}
	}
	if c.Reason != "" {
		lines = append(lines, "Note: "+c.Reason)
	}
	return lines
}

// unrecordedLines renders the worktree's unrecorded work, one line a
// file; its diff is a chunk of its own (unrecordedDiffLines), which a
// tight budget may drop while the list stays.
func unrecordedLines(c *RepoCheck) []string {
	if len(c.Unrecorded) == 0 {
		return nil
	}
	more := ""
	if c.UnrecordedTruncated {
		more = " at least"
	}
	what := "checkpoint " + c.Checkpoint
	if c.SinceStart != "" {
		what = "the session's start"
	}
	lines := []string{fmt.Sprintf("Unrecorded work in the worktree (uncommitted, not what %s recorded:%s %s; the predecessor's, unless you know otherwise):",
		what, more, plural(len(c.Unrecorded), "file"))}
	for _, d := range c.Unrecorded {
		head := fmt.Sprintf("- %s (%s, +%d -%d", SafeText(d.Path), d.Status, d.Added, d.Removed)
		if d.Base != "" && !strings.HasPrefix(d.Base, "HEAD:") {
			head += "; the checkpoint's content: git cat-file -p " + short(d.Base)
		}
		head += ")"
		if d.Note != "" {
			head += ": " + SafeText(d.Note)
		}
		lines = append(lines, head)
	}
	return lines
}

// unrecordedDiffLines renders the diff of the unrecorded work against
// what the checkpoint recorded, at most repo.MaxDiffLines lines in all;
// nil when there is no diff to show.
func unrecordedDiffLines(c *RepoCheck) []string {
	if c == nil {
		return nil
	}
	lines := []string{fmt.Sprintf("## Unrecorded work: the diff against checkpoint %s", c.Checkpoint)}
	if c.SinceStart != "" {
		lines[0] = "## Unrecorded work: the diff against the session's start"
	}
	budget := repo.MaxDiffLines
	for _, d := range c.Unrecorded {
		if len(d.Lines) == 0 {
			continue
		}
		if budget <= 0 {
			lines = append(lines, "--- "+SafeLine(d.Path)+" (diff not shown: the packet's diff lines are used up)")
			continue
		}
		lines = append(lines, "--- "+SafeLine(d.Path))
		for _, l := range d.Lines {
			if budget == 0 {
				lines = append(lines, "(diff cut)")
				break
			}
			lines = append(lines, SafeLine(l))
			budget--
		}
		if d.Truncated && budget > 0 {
			lines = append(lines, "(diff cut)")
		}
	}
	if len(lines) == 1 {
		return nil
	}
	return lines
}

func short(sha string) string {
	if sha == "" {
		return "(no commit)"
	}
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func branchName(b string) string {
	if b == "" {
		return "a detached HEAD"
	}
	return "branch " + b
}

// plural is "1 file", "2 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
