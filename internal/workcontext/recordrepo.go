package workcontext

import (
	"context"
	"path/filepath"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// CaptureRepo reads the repository of dir; a repository that cannot be
// read is recorded as unverifiable, with the reason, never as clean. The
// record withholds a branch or file name that looks like a credential
// (repo.Withheld); the state returned for comparisons keeps every name
// (nil when the repository could not be read).
func CaptureRepo(ctx context.Context, dir string) (*events.RepoRecord, *repo.State) {
	return recordRepo(repo.Capture(ctx, dir))
}

// KeptRepo is CaptureRepo for a checkpoint: the dirty files' content is
// written into the repository's object database (repo.CaptureKept), so
// what the checkpoint saw can be read back and a successor shown a diff
// of the work done after it.
func KeptRepo(ctx context.Context, dir string) (*events.RepoRecord, *repo.State) {
	return recordRepo(repo.CaptureKept(ctx, dir))
}

func recordRepo(st *repo.State, err error) (*events.RepoRecord, *repo.State) {
	if err != nil {
		return &events.RepoRecord{Unverifiable: repo.ReasonOf(err)}, nil
	}
	recorded, _ := repo.Withheld(st.Recorded())
	return &events.RepoRecord{State: recorded}, st
}

// recordedSince is the repository a session's work is compared with: the
// one checkpoint cp (the latest of its chain) recorded, or, before any
// checkpoint, the one its start recorded; nil when none was recorded.
// byCheckpoint says which.
func recordedSince(cp *projections.Checkpoint, start *events.RepoRecord) (from *repo.State, byCheckpoint bool) {
	switch {
	case cp != nil && cp.Repo != nil && cp.Repo.State != nil:
		return cp.Repo.State, true
	case cp == nil && start != nil && start.State != nil:
		return start.State, false
	}
	return nil, false
}

// CheckpointRepo captures the repository of a session working in dir for
// a checkpoint (KeptRepo), with the files changed since cp, the latest
// checkpoint of its chain, or, without one, since start, what the
// session's start recorded. awrFile says which paths are awr's own, not
// the work's (repo.WorkSince). Files that cannot be listed make the
// record unverifiable, with the reason.
func CheckpointRepo(ctx context.Context, dir string, cp *projections.Checkpoint, start *events.RepoRecord, awrFile func(string) bool) *events.RepoRecord {
	rec, now := KeptRepo(ctx, dir)
	if now == nil {
		return rec
	}
	from, byCheckpoint := recordedSince(cp, start)
	switch {
	case from == nil:
		return rec // nothing recorded to compare with
	case byCheckpoint:
		rec.FilesSince = cp.ID
	default:
		rec.FilesSince = events.FilesSinceStart
	}
	files, truncated, err := repo.WorkSince(ctx, dir, from, now, awrFile)
	if err != nil {
		rec.Unverifiable = "files changed since " + rec.FilesSince + ": " + repo.ReasonOf(err)
		rec.FilesSince = ""
		return rec
	}
	if len(files) > 0 { // none is recorded as absent, as a decode reads it
		rec.FilesChanged = files
	}
	rec.FilesTruncated = truncated
	return rec
}

// Unsaved compares the repository of a session working in dir now with
// the one cp, the latest checkpoint of its chain, recorded (or, before
// any checkpoint, its start): known is false when either cannot be read;
// since says which; files names what changed, at most a few, with
// credential-like names withheld. awrFile says which paths are awr's own
// (a change to them alone is no change).
func Unsaved(ctx context.Context, dir string, cp *projections.Checkpoint, start *events.RepoRecord, awrFile func(string) bool) (known, changed bool, since string, files []string) {
	from, byCheckpoint := recordedSince(cp, start)
	switch {
	case from == nil:
		return false, false, "", nil
	case byCheckpoint:
		since = "checkpoint " + cp.ID
	default:
		since = "the session started"
	}
	_, now := CaptureRepo(ctx, dir)
	if now == nil {
		return false, false, "", nil
	}
	if now.Head == from.Head && now.DirtyFingerprint == from.DirtyFingerprint {
		return true, false, since, nil
	}
	fs, _, err := repo.WorkSince(ctx, dir, from, now, awrFile)
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

// LatestOfWork is the latest checkpoint of work at rev (nil without one)
// and the directory its session worked in, below projectDir ("" when the
// log does not know that session): what the repository is compared with
// when no checkpoint of a session's own chain is.
// Errors: those of reading the projections.
func LatestOfWork(conn *sqlite.Conn, projectDir, work string, rev int64) (cp *projections.Checkpoint, dir string, err error) {
	cps, err := projections.LatestCheckpointsOfWorkAt(conn, work, rev, 1)
	if err != nil || len(cps) == 0 {
		return nil, "", err
	}
	cp = &cps[0]
	s, err := projections.SessionAt(conn, cp.SessionID, rev)
	if err != nil || s == nil {
		return cp, "", err
	}
	start, err := projections.SessionStartOf(conn, s)
	if err != nil {
		return cp, "", err
	}
	return cp, filepath.Join(projectDir, filepath.FromSlash(start.Workdir)), nil
}
