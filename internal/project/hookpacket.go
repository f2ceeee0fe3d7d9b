package project

import (
	"context"

	"github.com/awr-dev/awr/internal/hosts"
	"github.com/awr-dev/awr/internal/repo"
)

// workChanges returns files without the host settings files `awr client
// install` wrote (hosts.InstalledFile): they are awr's, not the work's.
func (p *Project) workChanges(files []repo.File) []repo.File {
	var out []repo.File
	for _, f := range files {
		if !hosts.InstalledFile(p.dir, f.Path) {
			out = append(out, f)
		}
	}
	return out
}

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
	fs, _, err := repo.Changes(ctx, sr.dir, from, now)
	if err == nil {
		fs = p.workChanges(fs)
		if len(fs) == 0 {
			return true, false, since, nil // only awr's own hook settings changed
		}
		fs, _ = repo.WithheldFiles(fs)
		for _, f := range fs {
			files = append(files, SafeLine(f.Path))
		}
	}
	return true, true, since, files
}
