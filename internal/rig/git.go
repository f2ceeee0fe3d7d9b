package rig

import (
	"context"
	"path/filepath"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
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

// packetRepo is the repository section of the packet a launch compiles:
// the latest checkpoint the session inherits (its predecessor's chain on
// a resume, else the work item's latest) compared with the seat's
// directory now, its unrecorded work with a diff. Nil when there is no
// checkpoint to compare with or the log cannot be read (the launch then
// reports the log's error itself).
func (m *Manager) packetRepo(ctx context.Context, work, fromSession, dir string) *workcontext.RepoCheck {
	var cp *projections.Checkpoint
	err := m.Env.Store.Read(ctx, func(r *events.Reader) error {
		if fromSession != "" {
			c, err := projections.ChainCheckpointAt(r.Conn, fromSession, r.Head)
			cp = c
			return err
		}
		cps, err := projections.LatestCheckpointsOfWorkAt(r.Conn, work, r.Head, 1)
		if err == nil && len(cps) > 0 {
			cp = &cps[0]
		}
		return err
	})
	if err != nil || cp == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return workcontext.CheckRepo(ctx, dir, cp)
}
