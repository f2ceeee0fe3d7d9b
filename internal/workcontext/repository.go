package workcontext

import (
	"fmt"

	"github.com/awr-dev/awr/internal/repo"
)

// maxPacketFiles bounds the changed files a packet lists by name.
const maxPacketFiles = 20

// RepoCheck is the repository recorded by the latest checkpoint compared
// with the repository now: HEAD moved (old to new, the commits between),
// files changed since the checkpoint, worktree changed. A checkpoint that
// recorded no repository, no git, or git failing give status
// "unverifiable", never a pass.
type RepoCheck struct {
	Checkpoint    string      `json:"checkpoint"`
	CheckpointSeq int64       `json:"checkpoint_seq"`
	Recorded      *repo.State `json:"recorded"`
	repo.Comparison
}

// Unverifiable is a RepoCheck against checkpoint cp (id, seq) that could
// not be made, and why.
func Unverifiable(cp string, seq int64, reason string) *RepoCheck {
	return &RepoCheck{Checkpoint: cp, CheckpointSeq: seq, Comparison: repo.Comparison{Status: repo.CompareUnverifiable, Reason: reason}}
}

// repositoryLines renders a RepoCheck for the packet.
func repositoryLines(c *RepoCheck) []string {
	lines := []string{fmt.Sprintf("## Repository since checkpoint %s (seq %d)", c.Checkpoint, c.CheckpointSeq)}
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
	switch {
	case c.HeadUnknown:
		lines = append(lines, fmt.Sprintf("HEAD moved %s -> %s: the recorded commit is no longer in the repository (history rewritten)", short(c.RecordedHead), short(c.CurrentHead)))
	case c.HeadRewritten:
		lines = append(lines, fmt.Sprintf("HEAD moved %s -> %s: the recorded commit is not an ancestor of HEAD (reset, rebase or another branch)", short(c.RecordedHead), short(c.CurrentHead)))
	case c.HeadMoved:
		lines = append(lines, fmt.Sprintf("HEAD moved %s -> %s (%s since the checkpoint):", short(c.RecordedHead), short(c.CurrentHead), plural(c.CommitsBetween, "commit")))
		for _, cm := range c.Commits {
			lines = append(lines, "- "+cm.Sha+" "+SafeText(cm.Subject))
		}
	}
	if c.BranchChanged {
		lines = append(lines, "The branch changed since the checkpoint.")
	}
	if c.WorktreeChanged {
		lines = append(lines, "The worktree changed since the checkpoint (its uncommitted content is not what the checkpoint saw).")
	}
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
