package intake

import (
	"strings"

	"github.com/awr-dev/awr/internal/fault"
)

// Pairs parses the KEY=VALUE values of an init's map flag (--status-map,
// --field-map).
// Errors: Usage naming flag for a value that is not KEY=VALUE.
func Pairs(flag string, vals []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(val) == "" {
			return nil, fault.New(fault.Usage, "%s %q: want KEY=VALUE", flag, v).With("flag", flag).WithHint("awr init --help")
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(val)
	}
	return out, nil
}

// Ask is what an init asks of its preview: to apply it (Accept, with the
// Fingerprint the preview printed, if any) or to show it, on a project
// initialized at Revision with ID (Initialized) or on a new one.
type Ask struct {
	Accept, Initialized bool
	Fingerprint, ID     string
	Revision            int64
}

// Answer settles what the preview of the project in dir says before
// anything is written: a conflict with the manifest (which init never
// rewrites, and offers no accept that would fail) or a preview (on an
// initialized project with nothing to write, "initialized") is the
// answer (answered); otherwise the accept goes on.
// Errors: SourceConflict (hint awr source reindex) for an accept of a
// conflict; SourceStale (StaleManifest) for an accept whose manifest is
// not the one the preview read.
func (p *Preview) Answer(dir string, ask Ask) (answered bool, err error) {
	if p.Conflict() {
		// An edit of the manifest is seen as stale, and indexed by a
		// reindex.
		p.Status, p.RequiresAccept, p.Accept, p.Next = "conflict", false, "", "awr source reindex"
		if ask.Initialized {
			p.ProjectRevision, p.ProjectID = ask.Revision, ask.ID
		}
		if ask.Accept {
			return false, fault.New(fault.SourceConflict, "init: %s already exists and maps different sources; it is never overwritten", ManifestPath(dir)).
				With("path", ManifestPath(dir)).WithHint("awr source reindex")
		}
		return true, nil
	}
	if ask.Accept && ask.Fingerprint != "" && p.Fingerprint != "" && ask.Fingerprint != p.Fingerprint {
		// The manifest the accept was previewed on is not the one there
		// now: preview again.
		return false, StaleManifest(dir, ask.Fingerprint, p.Fingerprint, PreviewAgain(p.Accept, p.Fingerprint))
	}
	if !ask.Accept {
		p.Status, p.RequiresAccept, p.Next = "preview", true, p.Accept
		if ask.Initialized {
			p.ProjectRevision, p.ProjectID = ask.Revision, ask.ID
			if len(p.Writes) == 0 {
				p.Status, p.RequiresAccept, p.Next = "initialized", false, "awr status"
			}
		}
		return true, nil
	}
	return false, nil
}
