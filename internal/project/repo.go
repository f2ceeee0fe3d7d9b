package project

import (
	"cmp"
	"context"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/hosts"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// The repository is part of a session's state: the door reads it (git
// runs outside every transaction, so no write lock waits on it) and hands
// what it read to the command, which records it or compares it.

// workdir resolves a session's working directory: rel is relative to the
// project root ("" is the root), or, when the project was found above the
// working directory, to the working directory ("" is that directory, where
// the agent runs). It returns the absolute directory and the form
// recorded in the log.
// Errors: InvalidInput for a directory outside the project (and its git
// worktrees: pathcheck.WorkDir, symbolic links followed) or missing.
func (p *Project) workdir(rel string) (abs, recorded string, err error) {
	if strings.TrimSpace(rel) == "" && p.within != "" {
		rel = "."
	}
	if strings.TrimSpace(rel) == "" {
		return p.dir, "", nil
	}
	rel = p.fromWorkingDir(rel)
	abs, ferr := p.workDir("session start", "--workdir", rel, true)
	if ferr != nil {
		return "", "", ferr
	}
	r, err := filepath.Rel(p.dir, abs)
	if err != nil {
		return "", "", fault.Wrap(fault.InvalidInput, err, "session start: --workdir %s", rel).With("flag", "--workdir")
	}
	if r == "." {
		r = ""
	}
	return abs, filepath.ToSlash(r), nil
}

// sessionRepo is what the door needs to read a session's repository: its
// working directory and the latest checkpoint of its chain.
type sessionRepo struct {
	dir        string
	checkpoint *projections.Checkpoint
	start      *events.RepoRecord
}

// sessionWorkdir is the working directory of session, the project's own
// without a session or for one the log does not know.
func (p *Project) sessionWorkdir(ctx context.Context, session string) (string, error) {
	if session == "" {
		return p.dir, nil
	}
	sr, err := p.sessionRepoOf(ctx, session)
	if err != nil || sr == nil {
		return p.dir, err
	}
	return sr.dir, nil
}

// sessionRepoOf reads, at the head, session's working directory, the
// latest checkpoint of its chain and the repository it started with. A
// session the log does not know gives nil: the command reports it.
// Before a write (events.PlanReads) it may read a shared log's cache as
// it is, and then catches up only for a session the cache does not hold:
// a session's working directory never changes once recorded, and the
// write refuses, under the lock, when an event of the streams read (the
// session's, and those of the sessions it continues up to the one with
// the chain's latest checkpoint) came after the read.
func (p *Project) sessionRepoOf(ctx context.Context, session string) (*sessionRepo, error) {
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	out, err := p.readSessionRepo(ctx, st, false, session)
	if err == nil && out == nil && st.ReadsCache(ctx) {
		out, err = p.readSessionRepo(ctx, st, true, session)
	}
	return out, err
}

// readSessionRepo is sessionRepoOf's read (events.Store.ReadForWrite).
func (p *Project) readSessionRepo(ctx context.Context, st *events.Store, catchUp bool, session string) (*sessionRepo, error) {
	var out *sessionRepo
	// The streams whose events would change the answer: filled by the
	// read, consulted by the write's check under the lock.
	streams := map[string]bool{"session/" + session: true}
	read := func(e *events.Event) bool { return streams[e.Stream] }
	err := st.ReadForWrite(ctx, catchUp, read, func(r *events.Reader) error {
		s, err := projections.SessionAt(r.Conn, session, r.Head)
		if err != nil || s == nil {
			return err
		}
		start, err := projections.SessionStartOf(r.Conn, s)
		if err != nil {
			return err
		}
		out = &sessionRepo{dir: filepath.Join(p.dir, filepath.FromSlash(start.Workdir)), start: start.Repo}
		// The chain as ChainCheckpointAt walks it: back through the
		// predecessors to the first with a checkpoint.
		seen := map[string]bool{}
		for c := s; c != nil && !seen[c.ID]; {
			seen[c.ID] = true
			streams["session/"+c.ID] = true
			if c.LastCheckpointID != "" || c.PredecessorID == "" {
				break
			}
			if c, err = projections.SessionAt(r.Conn, c.PredecessorID, r.Head); err != nil {
				return err
			}
		}
		out.checkpoint, err = projections.ChainCheckpointAt(r.Conn, s.ID, r.Head)
		return err
	})
	return out, err
}

// checkpointRepo captures a session's repository for a checkpoint, with
// the files changed since the chain's previous checkpoint (or since the
// session started): workcontext.CheckpointRepo.
func (p *Project) checkpointRepo(ctx context.Context, session string) (*events.RepoRecord, error) {
	sr, err := p.sessionRepoOf(ctx, session)
	if err != nil || sr == nil {
		return nil, err
	}
	return workcontext.CheckpointRepo(ctx, sr.dir, sr.checkpoint, sr.start, p.awrFile), nil
}

// repoCheck compares the repository recorded by the latest checkpoint of
// session's chain (or, without one, of work) with the repository now.
// Without any checkpoint, a session's worktree is compared with what its
// start recorded (workcontext.CheckRepoSinceStart); nil when there is
// nothing to compare with.
func (p *Project) repoCheck(ctx context.Context, work, session string) (*workcontext.RepoCheck, error) {
	var cp *projections.Checkpoint
	var start *repo.State
	dir := p.dir
	if session != "" {
		sr, err := p.sessionRepoOf(ctx, session)
		if err != nil || sr == nil {
			return nil, err
		}
		cp, dir = sr.checkpoint, sr.dir
		if sr.start != nil {
			start = sr.start.State
		}
	}
	if cp == nil {
		st, err := p.EventLog(ctx)
		if err != nil {
			return nil, err
		}
		var workDir string
		if err := st.Read(ctx, func(r *events.Reader) (err error) {
			cp, workDir, err = workcontext.LatestOfWork(r.Conn, p.dir, work, r.Head)
			return err
		}); err != nil {
			return nil, err
		}
		dir = cmp.Or(workDir, dir)
	}
	if cp == nil {
		if session != "" && start != nil {
			return workcontext.CheckRepoSinceStart(ctx, dir, session, start), nil
		}
		return nil, nil
	}
	return compareRepo(ctx, dir, cp), nil
}

// compareRepo compares checkpoint cp's recorded repository with dir's now
// (workcontext.CheckRepo).
func compareRepo(ctx context.Context, dir string, cp *projections.Checkpoint) *workcontext.RepoCheck {
	return workcontext.CheckRepo(ctx, dir, cp)
}

// awrFile says whether path (relative to the repository) is a host
// settings file `awr client install` wrote (hosts.InstalledFile): it is
// awr's, not the work's.
func (p *Project) awrFile(path string) bool { return hosts.InstalledFile(p.dir, path) }

// unsaved compares session's repository now with the one its latest
// checkpoint recorded (or, before any checkpoint, its start):
// workcontext.Unsaved.
func (p *Project) unsaved(ctx context.Context, session string) (known, changed bool, since string, files []string) {
	sr, err := p.sessionRepoOf(ctx, session)
	if err != nil || sr == nil {
		return false, false, "", nil
	}
	return workcontext.Unsaved(ctx, sr.dir, sr.checkpoint, sr.start, p.awrFile)
}
