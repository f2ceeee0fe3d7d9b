package project

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// MaxReindexKeys is how many keys status names per list (added, changed,
// removed) of each source of the last reindex; the counts are whole.
const MaxReindexKeys = 20

// LastReindex is what the last index of the project's sources changed in
// their work items, read from the log at the revision of the read: the
// source_indexed events of that index (one transaction: consecutive
// events stamped with one time), each source's items compared as of the
// revision before them and as of the last of them, as awr source reindex
// compares them (intake.Plain: a line moved is no change).
type LastReindex struct {
	FromSeq    int64 `json:"from_seq"`
	Seq        int64 `json:"seq"`
	OccurredAt int64 `json:"occurred_at"`
	// ItemsAdded, ItemsChanged and ItemsRemoved count the work items over
	// every source of the index.
	ItemsAdded   int            `json:"items_added"`
	ItemsChanged int            `json:"items_changed"`
	ItemsRemoved int            `json:"items_removed"`
	Sources      []SourceChange `json:"sources"`
}

// SourceChange is what one index changed in one source: the keys added,
// changed and removed (at most MaxReindexKeys each, in the file's order)
// and how many there are. First says the source was indexed for the
// first time, Dropped that it left the manifest.
type SourceChange struct {
	intake.ItemChanges
	AddedCount   int  `json:"added_count"`
	ChangedCount int  `json:"changed_count"`
	RemovedCount int  `json:"removed_count"`
	First        bool `json:"first,omitempty"`
	Dropped      bool `json:"dropped,omitempty"`
}

// indexEvent is what the last reindex reads of a source_indexed payload:
// not its elements.
type indexEvent struct {
	Path    string                `json:"path"`
	Removed bool                  `json:"removed"`
	Delta   bool                  `json:"delta"`
	Dropped *events.SourceDropped `json:"dropped"`
}

// lastReindex finds the last index of the sources at rev and what it
// changed; nil when no source was indexed, or when the last index only
// indexed sources for the first time (awr init, awr source add): status
// says what a reindex changed. Its cost follows what that index changed
// (the item versions it began, one lookup of each one's predecessor),
// never the length of the log; a source replaced whole or removed is
// read whole.
func lastReindex(conn *sqlite.Conn, rev int64) (*LastReindex, error) {
	last, err := projections.LastSourceIndexAt(conn, rev)
	if err != nil || last == 0 {
		return nil, err
	}
	out := &LastReindex{Seq: last, FromSeq: last, Sources: []SourceChange{}}
	byPath := map[string][]indexEvent{}
	var paths []string
	for seq := last; seq >= 1; seq-- {
		var ev *indexEvent
		err := events.ScanEvents(conn, seq, seq, func(e *events.Event) error {
			if e.Kind != events.KindSourceIndexed || (seq < last && e.OccurredAt != out.OccurredAt) {
				return nil
			}
			out.OccurredAt = e.OccurredAt
			ev = &indexEvent{}
			if err := json.Unmarshal(e.Payload, ev); err != nil {
				return fault.Wrap(fault.Storage, err, "status: event %d (%s)", e.Seq, e.Kind).With("seq", e.Seq).WithHint("awr verify")
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if ev == nil {
			break
		}
		out.FromSeq = seq
		if byPath[ev.Path] == nil {
			paths = append(paths, ev.Path)
		}
		byPath[ev.Path] = append(byPath[ev.Path], *ev)
	}
	sort.Strings(paths)
	reindexed := false
	for _, path := range paths {
		c, err := sourceChange(conn, path, byPath[path], out.FromSeq, out.Seq)
		if err != nil {
			return nil, err
		}
		reindexed = reindexed || !c.First
		out.ItemsAdded += c.AddedCount
		out.ItemsChanged += c.ChangedCount
		out.ItemsRemoved += c.RemovedCount
		out.Sources = append(out.Sources, c)
	}
	if !reindexed {
		return nil, nil
	}
	return out, nil
}

// keyed is one key of a change list, with the line it is (or was) at.
type keyed struct {
	key  string
	line int
}

// changeList is one list of a source's changes: the keys once each, in
// the file's order.
type changeList map[string]int

func (l changeList) add(key string, line int) {
	if at, ok := l[key]; !ok || line < at {
		l[key] = line
	}
}

// keys returns the first MaxReindexKeys keys in the file's order, and how
// many there are.
func (l changeList) keys() ([]string, int) {
	ks := make([]keyed, 0, len(l))
	for k, line := range l {
		ks = append(ks, keyed{k, line})
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].line != ks[j].line {
			return ks[i].line < ks[j].line
		}
		return ks[i].key < ks[j].key
	})
	out := []string{}
	for _, k := range ks {
		if len(out) == MaxReindexKeys {
			break
		}
		out = append(out, k.key)
	}
	return out, len(ks)
}

// sourceChange compares source path's work items as of from-1 and as of
// to, the events evs of the index having changed it in between.
func sourceChange(conn *sqlite.Conn, path string, evs []indexEvent, from, to int64) (SourceChange, error) {
	c := SourceChange{ItemChanges: intake.ItemChanges{Path: path}}
	added, changed, removed := changeList{}, changeList{}, changeList{}
	finish := func() (SourceChange, error) {
		c.Added, c.AddedCount = added.keys()
		c.Changed, c.ChangedCount = changed.keys()
		c.Removed, c.RemovedCount = removed.keys()
		return c, nil
	}
	_, before, err := projections.SourceHeldAt(conn, path, from-1)
	if err != nil {
		return c, err
	}
	after, held, err := projections.SourceHeldAt(conn, path, to)
	if err != nil {
		return c, err
	}
	c.Dropped = !held
	whole := false
	for _, e := range evs {
		whole = whole || e.Removed || !e.Delta
	}
	switch {
	case !before:
		// Indexed for the first time: every item it holds is new, and
		// only the keys named are read.
		c.First = true
		if !held {
			return finish()
		}
		news, err := projections.ItemsBeganBetween(conn, path, from, to, MaxReindexKeys)
		if err != nil {
			return c, err
		}
		for _, it := range news {
			added.add(it.Key, it.Source.LineStart)
		}
		c, err := finish()
		c.AddedCount = after
		return c, err
	case whole:
		// Replaced whole (a log written before deltas) or removed: the
		// source's items are compared whole.
		old, err := projections.SourceItemsAt(conn, path, from-1)
		if err != nil {
			return c, err
		}
		var now []projections.SourceItem
		if held {
			if now, err = projections.SourceItemsAt(conn, path, to); err != nil {
				return c, err
			}
		}
		was := map[string]projections.SourceItem{}
		for _, it := range old {
			was[ref(it.Key, it.Ordinal)] = it
		}
		for _, it := range now {
			o, ok := was[ref(it.Key, it.Ordinal)]
			delete(was, ref(it.Key, it.Ordinal))
			switch {
			case !ok:
				added.add(it.Key, it.Source.LineStart)
			case intake.Plain(o.WorkItem.WorkItem) != intake.Plain(it.WorkItem.WorkItem):
				changed.add(it.Key, it.Source.LineStart)
			}
		}
		for _, it := range was {
			removed.add(it.Key, it.Source.LineStart)
		}
		return finish()
	}
	// Deltas: the versions they began, each against its predecessor, and
	// the declarations they dropped.
	news, err := projections.ItemsBeganBetween(conn, path, from, to, -1)
	if err != nil {
		return c, err
	}
	began := map[string]bool{}
	for _, it := range news {
		began[ref(it.Key, it.Ordinal)] = true
		old, err := projections.ItemBefore(conn, it.Key, path, it.Ordinal, from)
		if err != nil {
			return c, err
		}
		switch {
		case old == nil:
			added.add(it.Key, it.Source.LineStart)
		case intake.Plain(old.WorkItem) != intake.Plain(it.WorkItem.WorkItem):
			changed.add(it.Key, it.Source.LineStart)
		}
	}
	for _, e := range evs {
		if e.Dropped == nil {
			continue
		}
		for _, d := range e.Dropped.Items {
			if began[ref(d.Key, d.Repeat)] {
				continue
			}
			old, err := projections.ItemBefore(conn, d.Key, path, d.Repeat, from)
			if err != nil {
				return c, err
			}
			if old != nil {
				removed.add(d.Key, old.Source.LineStart)
			}
		}
	}
	return finish()
}

// ref names one declaration of a key in a source.
func ref(key string, ordinal int) string { return key + "\x00" + strconv.Itoa(ordinal) }
