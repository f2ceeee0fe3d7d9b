package repo

import "github.com/awr-dev/awr/internal/secret"

// Withheld returns s as the log may record it: a branch name or a dirty
// file's path (or the path it was renamed from) that looks like a
// credential is replaced by "[withheld: KIND]", and n counts the names
// replaced. Nothing else changes: the head, the dirty flag, the
// fingerprint over every dirty file's content and each file's status and
// blob still say exactly what the repository held, so a checkpoint is
// never refused for a file's name and a name never leaks a secret. s
// itself is left as it is (its full list still answers comparisons in
// this process); the result shares nothing with it that was changed.
func Withheld(s *State) (out *State, n int) {
	if s == nil {
		return nil, 0
	}
	c := *s
	if f, ok := secret.Find(c.Branch); ok {
		c.Branch, n = marker(f), n+1
	}
	var m int
	c.DirtyFiles, m = WithheldFiles(s.DirtyFiles)
	return &c, n + m
}

// WithheldFiles returns files with every path that looks like a
// credential replaced as Withheld does, and how many were; files itself
// is not changed (a copy is made when one is).
func WithheldFiles(files []File) ([]File, int) {
	var out []File
	n := 0
	for i, f := range files {
		p, pok := secret.Find(f.Path)
		r, rok := secret.Find(f.From)
		if !pok && !rok {
			continue
		}
		if out == nil {
			out = append([]File(nil), files...)
		}
		if pok {
			out[i].Path = marker(p)
			n++
		}
		if rok {
			out[i].From = marker(r)
			n++
		}
	}
	if out == nil {
		return files, 0
	}
	return out, n
}

func marker(f secret.Finding) string { return "[withheld: " + f.Kind + "]" }
