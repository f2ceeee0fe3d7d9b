package repo

import "context"

// WorkSince returns the work's files changed in dir's repository from
// from to to (Changes): those own says are not the work's (the host
// settings files awr wrote) are left out, and a name that looks like a
// credential is withheld (WithheldFiles). truncated is that of Changes.
// Errors: those of Changes.
func WorkSince(ctx context.Context, dir string, from, to *State, own func(path string) bool) (files []File, truncated bool, err error) {
	all, truncated, err := Changes(ctx, dir, from, to)
	if err != nil {
		return nil, false, err
	}
	for _, f := range all {
		if !own(f.Path) {
			files = append(files, f)
		}
	}
	files, _ = WithheldFiles(files)
	return files, truncated, nil
}
