package rig

import (
	"context"
	"path/filepath"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
)

// repoState reads the repository of dir: HEAD, whether its worktree has
// changes and their content fingerprint, awr's own .awr directory
// excluded (awrRel is that directory relative to the work tree root, ""
// when it lies outside). ok is false outside a git work tree or without
// git.
func (m *Manager) repoState(ctx context.Context, dir string) (cur *events.SeatRepo, awrRel string, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, rel, err := repo.CaptureWithout(ctx, dir, filepath.Join(m.Dir, ".awr"))
	if err != nil {
		return nil, "", false
	}
	return &events.SeatRepo{Head: st.Head, Dirty: st.Dirty, DirtyFingerprint: st.DirtyFingerprint}, rel, true
}
