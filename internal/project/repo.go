package project

import (
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

// captureRepo reads the repository of dir; a repository that cannot be
// read is recorded as unverifiable, with the reason, never as clean. The
// record withholds a branch or file name that looks like a credential
// (repo.Withheld); the state returned for comparisons keeps every name.
func captureRepo(ctx context.Context, dir string) (*events.RepoRecord, *repo.State) {
	return recordRepo(repo.Capture(ctx, dir))
}

// keptRepo is captureRepo for a checkpoint: the dirty files' content is
// written into the repository's object database (repo.CaptureKept), so
// what the checkpoint saw can be read back and a successor shown a diff
// of the work done after it.
func keptRepo(ctx context.Context, dir string) (*events.RepoRecord, *repo.State) {
	return recordRepo(repo.CaptureKept(ctx, dir))
}

func recordRepo(st *repo.State, err error) (*events.RepoRecord, *repo.State) {
	if err != nil {
		return &events.RepoRecord{Unverifiable: repo.ReasonOf(err)}, nil
	}
	recorded, _ := repo.Withheld(st.Recorded())
	return &events.RepoRecord{State: recorded}, st
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
func (p *Project) sessionRepoOf(ctx context.Context, session string) (*sessionRepo, error) {
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	var out *sessionRepo
	err = st.Read(ctx, func(r *events.Reader) error {
		s, err := projections.SessionAt(r.Conn, session, r.Head)
		if err != nil || s == nil {
			return err
		}
		start, err := projections.SessionStartOf(r.Conn, s)
		if err != nil {
			return err
		}
		out = &sessionRepo{dir: filepath.Join(p.dir, filepath.FromSlash(start.Workdir)), start: start.Repo}
		out.checkpoint, err = projections.ChainCheckpointAt(r.Conn, s.ID, r.Head)
		return err
	})
	return out, err
}

// checkpointRepo captures a session's repository for a checkpoint, with
// the files changed since the chain's previous checkpoint (or since the
// session started).
func (p *Project) checkpointRepo(ctx context.Context, session string) (*events.RepoRecord, error) {
	sr, err := p.sessionRepoOf(ctx, session)
	if err != nil || sr == nil {
		return nil, err
	}
	rec, now := keptRepo(ctx, sr.dir)
	if now == nil {
		return rec, nil
	}
	var from *repo.State
	switch {
	case sr.checkpoint != nil && sr.checkpoint.Repo != nil && sr.checkpoint.Repo.State != nil:
		from, rec.FilesSince = sr.checkpoint.Repo.State, sr.checkpoint.ID
	case sr.checkpoint == nil && sr.start != nil && sr.start.State != nil:
		from, rec.FilesSince = sr.start.State, events.FilesSinceStart
	default:
		return rec, nil // nothing recorded to compare with
	}
	files, truncated, err := repo.WorkSince(ctx, sr.dir, from, now, p.awrFile)
	if err != nil {
		rec.Unverifiable = "files changed since " + rec.FilesSince + ": " + repo.ReasonOf(err)
		rec.FilesSince = ""
		return rec, nil
	}
	if len(files) > 0 { // none is recorded as absent, as a decode reads it
		rec.FilesChanged = files
	}
	rec.FilesTruncated = truncated
	return rec, nil
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
		if err := st.Read(ctx, func(r *events.Reader) error {
			cps, err := projections.LatestCheckpointsOfWorkAt(r.Conn, work, r.Head, 1)
			if err != nil || len(cps) == 0 {
				return err
			}
			cp = &cps[0]
			s, err := projections.SessionAt(r.Conn, cp.SessionID, r.Head)
			if err != nil || s == nil {
				return err
			}
			start, err := projections.SessionStartOf(r.Conn, s)
			if err != nil {
				return err
			}
			dir = filepath.Join(p.dir, filepath.FromSlash(start.Workdir))
			return nil
		}); err != nil {
			return nil, err
		}
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
// checkpoint recorded (or, before any checkpoint, its start): known is
// false when either cannot be read; files names what changed, at most a
// few, with credential-like names withheld.
func (p *Project) unsaved(ctx context.Context, session string) (known, changed bool, since string, files []string) {
	sr, err := p.sessionRepoOf(ctx, session)
	if err != nil || sr == nil {
		return false, false, "", nil
	}
	var from *repo.State
	switch {
	case sr.checkpoint != nil && sr.checkpoint.Repo != nil && sr.checkpoint.Repo.State != nil:
		from, since = sr.checkpoint.Repo.State, "checkpoint "+sr.checkpoint.ID
	case sr.checkpoint == nil && sr.start != nil && sr.start.State != nil:
		from, since = sr.start.State, "the session started"
	default:
		return false, false, "", nil
	}
	_, now := captureRepo(ctx, sr.dir)
	if now == nil {
		return false, false, "", nil
	}
	if now.Head == from.Head && now.DirtyFingerprint == from.DirtyFingerprint {
		return true, false, since, nil
	}
	fs, _, err := repo.WorkSince(ctx, sr.dir, from, now, p.awrFile)
	if err == nil {
		if len(fs) == 0 {
			return true, false, since, nil // only awr's own hook settings changed
		}
		for _, f := range fs {
			files = append(files, SafeLine(f.Path))
		}
	}
	return true, true, since, files
}
