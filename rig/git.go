package rig

import (
	"context"
	"os/exec"
	"strings"
	"time"
)

// repoState reads the repository HEAD of dir and whether its worktree has
// changes (awr's own .awr directory excluded). ok is false outside a git
// repository or without git.
func repoState(ctx context.Context, dir string) (head string, dirty, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false, false
	}
	head = strings.TrimSpace(string(out))
	st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--", ".", ":(exclude).awr").Output()
	if err != nil {
		return head, false, true
	}
	return head, len(strings.TrimSpace(string(st))) > 0, true
}
