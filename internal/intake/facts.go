package intake

import (
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// FactsAt gathers what the organization report (Organize) needs from
// the projections at rev and, at the head, the freshness of the files of
// the manifest m of the project in dir (Compare), with the states of the
// sources (awr intake inspect, awr source list).
func FactsAt(r *events.Reader, dir string, m *Manifest, rev, now int64) (Facts, []SourceState, error) {
	f := Facts{Initialized: true}
	indexed, err := projections.SourcesAt(r.Conn, rev, rev == r.Head)
	if err != nil {
		return f, nil, err
	}
	var states []SourceState
	if rev == r.Head && m != nil {
		states = Compare(dir, m, indexed)
	} else {
		for _, s := range indexed {
			states = append(states, SourceState{Path: s.Path, Adapter: s.Adapter, Role: s.Role, ContentHash: s.ContentHash,
				RevisionIndexed: s.Revision, Items: s.ItemCount, Issues: len(s.Issues), Freshness: "as_indexed"})
		}
	}
	if states == nil {
		states = []SourceState{}
	}
	f.Sources = states
	for _, s := range indexed {
		f.Issues = append(f.Issues, s.Issues...)
	}
	if f.Readiness, err = projections.ReadinessAt(r.Conn, rev, now, rev == r.Head); err != nil {
		return f, nil, err
	}
	if f.Goals, err = projections.GoalsAt(r.Conn, rev); err != nil {
		return f, nil, err
	}
	if f.Rules, err = projections.RulesAt(r.Conn, rev); err != nil {
		return f, nil, err
	}
	return f, states, nil
}

// AwaitingVerification lists the items of readiness the source marks
// completed for which the log holds no work_verified at rev: awr never
// takes a source's word for done (awr work complete records it with
// evidence).
func AwaitingVerification(conn *sqlite.Conn, readiness []projections.Readiness, rev int64) ([]string, error) {
	out := []string{}
	for _, rd := range readiness {
		if rd.Item.Status != projections.StatusCompleted {
			continue
		}
		vs, err := projections.WorkEventsAt(conn, rd.Item.Key, events.KindWorkVerified, rev, 1)
		if err != nil {
			return nil, err
		}
		if len(vs) == 0 {
			out = append(out, rd.Item.Key)
		}
	}
	return out, nil
}

// Unchanged says whether a reindex of the manifest m's sources in dir
// would append nothing to what the log indexed (projections.SourcesAt):
// every source listed that is on disk hashes to what the log holds for
// it with the same options, and nothing indexed is left out of the
// manifest. It lists, in the manifest's order, the sources unchanged
// and those not on disk; a source that cannot be read is a change (the
// write records why), and so is one indexed but no longer listed (the
// write removes it).
func Unchanged(dir string, m *Manifest, indexed []projections.Source) (unchanged, missing []string, ok bool) {
	current := map[string]string{}
	for _, s := range indexed {
		current[s.Path] = s.ContentHash + "\x00" + s.OptionsHash
	}
	unchanged, missing = []string{}, []string{}
	listed := map[string]bool{}
	for _, ms := range m.Sources {
		listed[ms.Path] = true
		hash, gone, readable := Hash(dir, ms)
		switch {
		case gone:
			missing = append(missing, ms.Path)
			continue
		case !readable:
			return nil, nil, false // unreadable: the write records why
		}
		if h, ok := current[ms.Path]; !ok || h != hash+"\x00"+OptionsHash(ms) {
			return nil, nil, false
		}
		unchanged = append(unchanged, ms.Path)
	}
	for _, s := range indexed {
		if !listed[s.Path] {
			return nil, nil, false // to be removed
		}
	}
	return unchanged, missing, true
}
