package intake

import (
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
)

// ReadAll reads every source manifest m lists in dir (Read), in the
// manifest's order: the sources read, the paths listed, and those of the
// listed files that are missing. progress, when not nil, is told the
// bytes read of all the sources' (stated, not read, first: a register of
// many megabytes takes seconds).
func ReadAll(dir string, m *Manifest, progress func(done, total int64)) (sources []events.SourceIndexed, listed, missing []string) {
	sizes := make([]int64, len(m.Sources))
	var total, done int64
	if progress != nil {
		for i, ms := range m.Sources {
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(ms.Path))); err == nil && fi.Mode().IsRegular() {
				sizes[i] = fi.Size()
				total += sizes[i]
			}
		}
	}
	for i, ms := range m.Sources {
		if progress != nil {
			progress(done, total)
			done += sizes[i]
		}
		listed = append(listed, ms.Path)
		si, gone := Read(dir, ms)
		if gone {
			missing = append(missing, ms.Path)
			continue
		}
		sources = append(sources, si)
	}
	if progress != nil {
		progress(total, total)
	}
	return sources, listed, missing
}

// Changes says, for each source a reindex indexed anew (indexed, of the
// sources read), which work items it added, changed and removed against
// the items each source had before (CompareItems); nil when none was
// indexed anew.
func Changes(indexed []commands.IndexResult, sources []events.SourceIndexed, before map[string][]events.WorkItem) []ItemChanges {
	var out []ItemChanges
	for _, ix := range indexed {
		for _, si := range sources {
			if si.Path == ix.Path && ix.Changed {
				out = append(out, CompareItems(si.Path, before[si.Path], si.Items))
			}
		}
	}
	return out
}
