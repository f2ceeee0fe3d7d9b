package intake

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
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
// compares them (Plain: a line moved is no change).
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
	ItemChanges
	AddedCount   int  `json:"added_count"`
	ChangedCount int  `json:"changed_count"`
	RemovedCount int  `json:"removed_count"`
	First        bool `json:"first,omitempty"`
	Dropped      bool `json:"dropped,omitempty"`
}

// LastReindexAt finds the last index of the sources at rev and what it
// changed; nil when no source was indexed, or when the last index only
// indexed sources for the first time (awr init, awr source add): status
// says what a reindex changed. Its cost follows what that index changed
// (its deltas' payloads, one lookup of the version each item replaced),
// never the length of the log nor the register's size; a source replaced
// whole or removed is read whole.
func LastReindexAt(conn *sqlite.Conn, rev int64) (*LastReindex, error) {
	last, err := projections.LastSourceIndexAt(conn, rev)
	if err != nil || last == 0 {
		return nil, err
	}
	out := &LastReindex{Seq: last, FromSeq: last, Sources: []SourceChange{}}
	// The events of the index: the source_indexed events back from the
	// last with its time, read without their payloads.
	bySeqs := map[string][]int64{}
	var paths []string
	for seq := last; seq >= 1; seq-- {
		kind, stream, at, err := events.EnvelopeAt(conn, seq)
		if err != nil {
			return nil, err
		}
		if seq == last {
			out.OccurredAt = at
		}
		if kind != events.KindSourceIndexed || at != out.OccurredAt {
			break
		}
		out.FromSeq = seq
		path := strings.TrimPrefix(stream, "source/")
		if bySeqs[path] == nil {
			paths = append(paths, path)
		}
		bySeqs[path] = append(bySeqs[path], seq)
	}
	sort.Strings(paths)
	// Only a reindex is reported: an index that was every source's first
	// is not, and its added items (the whole register) are not read.
	reindexed := false
	for _, path := range paths {
		_, wasHeld, err := projections.SourceHeldAt(conn, path, out.FromSeq-1)
		if err != nil {
			return nil, err
		}
		reindexed = reindexed || wasHeld
	}
	if !reindexed {
		return nil, nil
	}
	for _, path := range paths {
		seqs := bySeqs[path]
		slices.Reverse(seqs) // oldest first: a later delta's version wins
		c, err := sourceChange(conn, path, seqs, out.FromSeq, out.Seq)
		if err != nil {
			return nil, err
		}
		out.ItemsAdded += c.AddedCount
		out.ItemsChanged += c.ChangedCount
		out.ItemsRemoved += c.RemovedCount
		out.Sources = append(out.Sources, c)
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
// to, the events seqs of the index having changed it in between. A first
// index is counted from the source's row, and only the keys named are
// read; a later one is a delta whose payload names the items it added or
// changed (a line moved is enough: each is compared with the version it
// replaced) and those it dropped, so what is read follows what changed
// (the work projection restamps every item of a source whose adapter
// stamps the file's hash, so its rows do not). A source removed, or
// replaced whole by a log written before deltas, is compared whole.
func sourceChange(conn *sqlite.Conn, path string, seqs []int64, from, to int64) (SourceChange, error) {
	c := SourceChange{ItemChanges: ItemChanges{Path: path}}
	added, changed, removed := changeList{}, changeList{}, changeList{}
	finish := func() (SourceChange, error) {
		c.Added, c.AddedCount = added.keys()
		c.Changed, c.ChangedCount = changed.keys()
		c.Removed, c.RemovedCount = removed.keys()
		return c, nil
	}
	_, wasHeld, err := projections.SourceHeldAt(conn, path, from-1)
	if err != nil {
		return c, err
	}
	after, held, err := projections.SourceHeldAt(conn, path, to)
	if err != nil {
		return c, err
	}
	c.Dropped = !held
	if !wasHeld {
		c.First = true
		if !held {
			return finish()
		}
		news, err := projections.ItemsBeganBetween(conn, path, from, to, MaxReindexKeys)
		if err != nil {
			return c, err
		}
		for _, it := range news {
			added.add(it.Key, lineOf(it.Raw))
		}
		c, err := finish()
		c.AddedCount = after
		return c, err
	}
	// The final version of each declaration the deltas name, and the
	// declarations they drop.
	type named struct {
		key     string
		ordinal int
		item    *events.WorkItem // nil: dropped
	}
	var order []string
	last := map[string]named{}
	for _, seq := range seqs {
		var pl events.SourceIndexed
		err := events.ScanEvents(conn, seq, seq, func(e *events.Event) error {
			if err := json.Unmarshal(e.Payload, &pl); err != nil {
				return fault.Wrap(fault.Storage, err, "status: event %d (%s)", e.Seq, e.Kind).With("seq", e.Seq).WithHint("awr verify")
			}
			return nil
		})
		if err != nil {
			return c, err
		}
		if pl.Removed || !pl.Delta {
			return sourceWhole(conn, c, path, from, to, held)
		}
		note := func(n named) {
			r := itemRef(n.key, n.ordinal)
			if _, seen := last[r]; !seen {
				order = append(order, r)
			}
			last[r] = n
		}
		for i := range pl.Items {
			note(named{key: pl.Items[i].Key, ordinal: pl.ItemRepeat(i), item: &pl.Items[i]})
		}
		if pl.Dropped != nil {
			for _, d := range pl.Dropped.Items {
				note(named{key: d.Key, ordinal: d.Repeat})
			}
		}
	}
	for _, r := range order {
		n := last[r]
		oldRaw, ok, err := projections.ItemBefore(conn, n.key, path, n.ordinal, from)
		if err != nil {
			return c, err
		}
		switch {
		case n.item == nil && ok:
			removed.add(n.key, lineOf(oldRaw))
		case n.item == nil:
		case !ok:
			added.add(n.key, n.item.Source.LineStart)
		default:
			// The projection stores each item as the payload encodes it
			// (events.MarshalPayload): compared as bytes, bookkeeping aside.
			raw, err := events.MarshalPayload(n.item)
			if err != nil {
				return c, err
			}
			if plainRaw(oldRaw) != plainRaw(string(raw)) {
				changed.add(n.key, n.item.Source.LineStart)
			}
		}
	}
	return finish()
}

// sourceWhole compares source path's work items whole, as of from-1 and
// as of to: a source removed from the manifest, or replaced whole.
func sourceWhole(conn *sqlite.Conn, c SourceChange, path string, from, to int64, held bool) (SourceChange, error) {
	added, changed, removed := changeList{}, changeList{}, changeList{}
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
		was[itemRef(it.Key, it.Ordinal)] = it
	}
	for _, it := range now {
		o, ok := was[itemRef(it.Key, it.Ordinal)]
		delete(was, itemRef(it.Key, it.Ordinal))
		switch {
		case !ok:
			added.add(it.Key, lineOf(it.Raw))
		case plainRaw(o.Raw) != plainRaw(it.Raw):
			changed.add(it.Key, lineOf(it.Raw))
		}
	}
	for _, it := range was {
		removed.add(it.Key, lineOf(it.Raw))
	}
	c.Added, c.AddedCount = added.keys()
	c.Changed, c.ChangedCount = changed.keys()
	c.Removed, c.RemovedCount = removed.keys()
	return c, nil
}

// plainRaw is a work item's canonical JSON (sorted keys, as the work
// projection stores it) as a reindex compares it (see Plain):
// without the file's content hash and the item's lines in its source
// reference, compared as bytes with nothing decoded, since the last
// reindex of a large register whose lines all moved compares every item.
func plainRaw(raw string) string {
	head, _, rest, ok := sourceRef(raw)
	if !ok {
		return raw
	}
	return head + rest
}

// lineOf is the line a work item starts at, from its canonical JSON.
func lineOf(raw string) int {
	_, fields, _, ok := sourceRef(raw)
	if !ok {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(fields[1], `"line_start":`))
	return n
}

// sourceRef splits a work item's canonical JSON around its source
// reference's bookkeeping (its optional content hash, then line_end and
// line_start, in the keys' order): head ends with `"source":{`, fields
// are `"line_end":N` and `"line_start":M`, and rest is what follows them
// (the path). ok is false when the source reference is not in that form.
// A quote inside a JSON string is escaped, so `"source":{` is found only
// as the key.
func sourceRef(raw string) (head string, fields [2]string, rest string, ok bool) {
	const key = `"source":{`
	i := strings.Index(raw, key)
	if i < 0 {
		return "", fields, "", false
	}
	head, r := raw[:i+len(key)], raw[i+len(key):]
	if strings.HasPrefix(r, `"content_hash":"`) {
		j := strings.Index(r[len(`"content_hash":"`):], `"`)
		if j < 0 {
			return "", fields, "", false
		}
		r = strings.TrimPrefix(r[len(`"content_hash":"`)+j+1:], ",")
	}
	num := func(name string) (string, bool) {
		if !strings.HasPrefix(r, name) {
			return "", false
		}
		j := len(name)
		for j < len(r) && r[j] >= '0' && r[j] <= '9' {
			j++
		}
		f := r[:j]
		r = strings.TrimPrefix(r[j:], ",")
		return f, true
	}
	var ok1, ok2 bool
	if fields[0], ok1 = num(`"line_end":`); !ok1 {
		return "", fields, "", false
	}
	if fields[1], ok2 = num(`"line_start":`); !ok2 {
		return "", fields, "", false
	}
	return head, fields, r, true
}

// ref names one declaration of a key in a source.
func itemRef(key string, ordinal int) string { return key + "\x00" + strconv.Itoa(ordinal) }
