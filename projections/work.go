package projections

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Source is the read model of one indexed source file.
type Source struct {
	Path        string               `json:"path"`
	Adapter     string               `json:"adapter"`
	Role        string               `json:"role,omitempty"`
	ContentHash string               `json:"content_hash"`
	OptionsHash string               `json:"options_hash,omitempty"`
	Size        int64                `json:"size"`
	ModTimeMS   int64                `json:"mtime_ms"`
	ItemCount   int                  `json:"item_count"`
	Issues      []events.SourceIssue `json:"issues"`
	IndexedAt   int64                `json:"indexed_at"`
	Revision    int64                `json:"revision_indexed"`
}

// WorkItem is a work item as of some revision, with the source it came from.
type WorkItem struct {
	events.WorkItem
	SourcePath string `json:"-"`
	// Ordinal numbers the repeats of one key in one source (0 for the
	// first declaration).
	Ordinal int `json:"-"`
}

// work projects source_indexed events into sources, work items, goals and
// rules. A new index of a source replaces exactly the elements that changed.
type work struct {
	base
	sources versions[Source]
	tables  map[string]*elementTable
}

// element is one keyed thing parsed from a source (a work item, goal or
// rule): its canonical JSON and the extra indexed columns of its table.
type element struct {
	key     string
	source  string
	ordinal int // 0, or n for the n-th repeat of a key in one work item source
	json    string
	cols    map[string]string
}

// elementTable is the temporal table of one element kind, plus (during a
// bulk rebuild) the open keys of each source.
type elementTable struct {
	name     string // "item", "goal", "rule"
	valueCol string
	rows     versions[element]
	bySource map[string]map[string]bool
}

func newWork() *work {
	p := &work{base: base{name: "work", version: 7, schema: "work", tables: []Table{
		{Name: "p_sources", Key: []string{"path"}, Temporal: true},
		{Name: "p_work_items", Key: []string{"key", "source_path"}, Temporal: true},
		{Name: "p_goals", Key: []string{"key", "source_path"}, Temporal: true},
		{Name: "p_rules", Key: []string{"key", "source_path"}, Temporal: true},
		{Name: "p_work_queue", Key: []string{"key", "source_path", "ordinal"}, HeadOnly: true},
		{Name: "p_work_counts", Key: []string{"name"}, HeadOnly: true},
	}}, tables: map[string]*elementTable{}}
	p.sources = versions[Source]{insert: putSource, close: closeOpen("source_close", ":path"), load: func(conn *sqlite.Conn, path string, seq int64) (*Source, error) {
		return nil, nil // sources are replaced whole; the old version is never read
	}}
	for _, name := range []string{"item", "goal", "rule"} {
		t := &elementTable{name: name, valueCol: name}
		t.rows = versions[element]{insert: t.insert, close: t.close, load: func(*sqlite.Conn, string, int64) (*element, error) { return nil, nil }}
		p.tables[name] = t
	}
	return p
}

// BeginBulk starts a rebuild with open rows held in memory.
func (p *work) BeginBulk(conn *sqlite.Conn) error {
	p.sources.beginBulk()
	for _, t := range p.tables {
		t.rows.beginBulk()
		t.bySource = map[string]map[string]bool{}
	}
	return p.base.BeginBulk(conn)
}

// AbortBulk drops the in-memory state of a failed bulk build.
func (p *work) AbortBulk(conn *sqlite.Conn) {
	p.sources.bulk, p.sources.current, p.sources.from = false, nil, nil
	for _, t := range p.tables {
		t.rows.bulk, t.rows.current, t.rows.from = false, nil, nil
		t.bySource = nil
	}
}

// EndBulk writes the open rows and creates the indexes.
func (p *work) EndBulk(conn *sqlite.Conn) error {
	if err := p.sources.endBulk(conn); err != nil {
		return err
	}
	for _, name := range []string{"item", "goal", "rule"} {
		t := p.tables[name]
		if err := t.rows.endBulk(conn); err != nil {
			return err
		}
		t.bySource = nil
	}
	if err := p.base.EndBulk(conn); err != nil {
		return err
	}
	return placeWork(conn)
}

// Apply folds a source_indexed event (apply), then, once a whole index
// of a source is in (an unsplit index, or the last part of a split one),
// files the head's work in its queues again (placeWork): in a bulk
// rebuild, EndBulk does that once.
func (p *work) Apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	if e.Kind != events.KindSourceIndexed {
		return nil
	}
	if err := p.apply(conn, e, v); err != nil {
		return err
	}
	pl, err := payload[events.SourceIndexed](e, v)
	if err != nil || p.sources.bulk || !pl.Last() {
		return err
	}
	return placeWork(conn)
}

// apply replaces a source's sources row, items, goals and rules with a new
// index of it, or, for a delta, changes the elements the delta names. The
// sources row is set by an unsplit index or the last part of a split one.
func (p *work) apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	pl, err := payload[events.SourceIndexed](e, v)
	if err != nil {
		return err
	}
	var items, goals, rules []elementValue
	repeats := map[string]int{}
	for i, it := range pl.Items {
		// Work items keep every repeat of a key: a duplicate is reported,
		// never silently resolved. Goals and rules keep the first.
		ordinal := repeats[it.Key]
		if pl.Delta {
			ordinal = pl.ItemRepeat(i)
		}
		items = append(items, elementValue{key: it.Key, ordinal: ordinal, value: it, cols: map[string]string{
			":title": it.Title, ":status": it.Status, ":priority": it.Priority, ":goal": it.Goal}})
		repeats[it.Key]++
	}
	for _, g := range pl.Goals {
		goals = append(goals, elementValue{key: g.Key, value: g, cols: map[string]string{":title": g.Title, ":status": g.Status}})
	}
	for _, r := range pl.Rules {
		rules = append(rules, elementValue{key: r.Key, value: r, cols: map[string]string{":strength": r.Strength}})
	}
	var count int
	if pl.Delta && !pl.Removed {
		var dropItems, dropGoals, dropRules []string
		if d := pl.Dropped; d != nil {
			for _, ref := range d.Items {
				dropItems = append(dropItems, localKey(ref.Key, ref.Repeat))
			}
			for _, k := range d.Goals {
				dropGoals = append(dropGoals, localKey(k, 0))
			}
			for _, k := range d.Rules {
				dropRules = append(dropRules, localKey(k, 0))
			}
		}
		if count, err = p.tables["item"].patch(conn, e.Seq, pl.Path, pl.ContentHash, items, dropItems); err != nil {
			return err
		}
		if _, err := p.tables["goal"].patch(conn, e.Seq, pl.Path, pl.ContentHash, goals, dropGoals); err != nil {
			return err
		}
		if _, err := p.tables["rule"].patch(conn, e.Seq, pl.Path, pl.ContentHash, rules, dropRules); err != nil {
			return err
		}
	} else {
		if pl.Removed {
			items, goals, rules = nil, nil, nil
		}
		if count, err = p.tables["item"].sync(conn, e.Seq, pl.Path, items); err != nil {
			return err
		}
		if _, err := p.tables["goal"].sync(conn, e.Seq, pl.Path, goals); err != nil {
			return err
		}
		if _, err := p.tables["rule"].sync(conn, e.Seq, pl.Path, rules); err != nil {
			return err
		}
	}
	if pl.Removed {
		return p.sources.drop(conn, pl.Path, e.Seq)
	}
	if !pl.Last() {
		return nil
	}
	issues := pl.Issues
	if issues == nil {
		issues = []events.SourceIssue{}
	}
	return p.sources.put(conn, pl.Path, e.Seq, &Source{
		Path: pl.Path, Adapter: pl.Adapter, Role: pl.Role, ContentHash: pl.ContentHash, OptionsHash: pl.OptionsHash, Size: pl.Size,
		ModTimeMS: pl.ModTimeMS, ItemCount: count, Issues: issues, IndexedAt: e.OccurredAt, Revision: e.Seq,
	})
}

func putSource(conn *sqlite.Conn, s *Source, from, to int64) error {
	raw, _ := json.Marshal(s.Issues)
	return exec(conn, "source_insert", func(st *sqlite.Stmt) {
		st.SetText(":path", s.Path)
		st.SetText(":adapter", s.Adapter)
		st.SetText(":role", s.Role)
		st.SetText(":content_hash", s.ContentHash)
		st.SetText(":options_hash", s.OptionsHash)
		st.SetInt64(":size", s.Size)
		st.SetInt64(":mtime_ms", s.ModTimeMS)
		st.SetInt64(":item_count", int64(s.ItemCount))
		st.SetText(":issues", string(raw))
		st.SetInt64(":indexed_at", s.IndexedAt)
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
	})
}

// elementValue is a parsed element before encoding.
type elementValue struct {
	key     string
	ordinal int
	value   any
	cols    map[string]string
}

// localKey identifies an element within its source: repeats of a key in
// one source (ordinal > 0) are kept apart, so duplicates stay visible.
func localKey(key string, ordinal int) string { return strconv.Itoa(ordinal) + ":" + key }

// elementKey identifies an element within its table: the source path's
// length, a colon, the path and the element's local key, so it splits
// back into its parts whatever the path and the key hold (a key may hold
// a NUL or a colon).
func elementKey(source, local string) string { return strconv.Itoa(len(source)) + ":" + source + local }

// splitElementKey is elementKey's inverse.
func splitElementKey(k string) (source, key string, ordinal int) {
	n, rest, _ := strings.Cut(k, ":")
	l, err := strconv.Atoi(n)
	if err != nil || l < 0 || l > len(rest) {
		panic(fmt.Sprintf("projections: malformed element key %q", k))
	}
	source = rest[:l]
	ord, key, _ := strings.Cut(rest[l:], ":")
	ordinal, _ = strconv.Atoi(ord)
	return source, key, ordinal
}

func (t *elementTable) insert(conn *sqlite.Conn, el *element, from, to int64) error {
	return exec(conn, t.name+"_insert", func(st *sqlite.Stmt) {
		st.SetText(":key", el.key)
		st.SetText(":source_path", el.source)
		if t.name == "item" {
			st.SetInt64(":ordinal", int64(el.ordinal))
		}
		st.SetText(":"+t.valueCol, el.json)
		for k, v := range el.cols {
			st.SetText(k, v)
		}
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
	})
}

func (t *elementTable) close(conn *sqlite.Conn, k string, seq int64) error {
	source, key, ordinal := splitElementKey(k)
	return exec(conn, t.name+"_close", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", seq)
		st.SetText(":source_path", source)
		st.SetText(":key", key)
		if t.name == "item" {
			st.SetInt64(":ordinal", int64(ordinal))
		}
	})
}

// openBySource returns the open elements of source: local key (key and
// ordinal) to canonical JSON.
func (t *elementTable) openBySource(conn *sqlite.Conn, source string) (map[string]string, error) {
	out := map[string]string{}
	if t.rows.bulk {
		for lk := range t.bySource[source] {
			out[lk] = t.rows.current[elementKey(source, lk)].json
		}
		return out, nil
	}
	err := query(conn, t.name+"_current_by_source", func(st *sqlite.Stmt) {
		st.SetText(":source_path", source)
	}, func(st *sqlite.Stmt) error {
		ordinal := 0
		if t.name == "item" {
			ordinal = int(st.GetInt64("ordinal"))
		}
		out[localKey(st.GetText("key"), ordinal)] = st.GetText(t.valueCol)
		return nil
	})
	return out, err
}

// sync makes the open elements of source equal to want, stamping changes
// at seq, and returns how many are open after. The first of duplicate keys
// wins; duplicates are reported by intake, not resolved here.
func (t *elementTable) sync(conn *sqlite.Conn, seq int64, source string, want []elementValue) (int, error) {
	current, err := t.openBySource(conn, source)
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, el := range want {
		lk := localKey(el.key, el.ordinal)
		if seen[lk] {
			continue
		}
		seen[lk] = true
		raw, err := events.MarshalPayload(el.value)
		if err != nil {
			return 0, err
		}
		if old, had := current[lk]; had && old == string(raw) {
			continue
		}
		if err := t.rows.put(conn, elementKey(source, lk), seq, &element{key: el.key, source: source, ordinal: el.ordinal, json: string(raw), cols: el.cols}); err != nil {
			return 0, err
		}
		if t.rows.bulk {
			if t.bySource[source] == nil {
				t.bySource[source] = map[string]bool{}
			}
			t.bySource[source][lk] = true
		}
	}
	for lk := range current {
		if seen[lk] {
			continue
		}
		if err := t.rows.drop(conn, elementKey(source, lk), seq); err != nil {
			return 0, err
		}
		if t.rows.bulk {
			delete(t.bySource[source], lk)
		}
	}
	return len(seen), nil
}

// SourceElements are the elements a source holds at the head, each as
// the canonical JSON the work projection stores: work items by key and
// declaration, goals and rules by key (their first declaration).
type SourceElements struct {
	Items map[events.ItemRef]string
	Goals map[string]string
	Rules map[string]string
}

// Empty reports whether the source holds no element.
func (s *SourceElements) Empty() bool {
	return len(s.Items) == 0 && len(s.Goals) == 0 && len(s.Rules) == 0
}

// ElementsOf returns the elements source path holds at the head, each as
// a delta with content hash hash would leave it (restamped, see
// events.Restamp): what a delta index of it is computed against.
func ElementsOf(conn *sqlite.Conn, path, hash string) (*SourceElements, error) {
	out := &SourceElements{Items: map[events.ItemRef]string{}, Goals: map[string]string{}, Rules: map[string]string{}}
	for _, name := range []string{"item", "goal", "rule"} {
		t := &elementTable{name: name, valueCol: name}
		open, err := t.openBySource(conn, path)
		if err != nil {
			return nil, err
		}
		for lk, raw := range open {
			el, err := restamped(name, lk, raw, hash)
			if err != nil {
				return nil, fmt.Errorf("%s %q of %s: %w", name, lk, path, err)
			}
			if el != nil {
				b, err := events.MarshalPayload(el.value)
				if err != nil {
					return nil, err
				}
				raw = string(b)
			}
			ord, key, _ := strings.Cut(lk, ":")
			n, _ := strconv.Atoi(ord)
			switch name {
			case "item":
				out.Items[events.ItemRef{Key: key, Repeat: n}] = raw
			case "goal":
				out.Goals[key] = raw
			case "rule":
				out.Rules[key] = raw
			}
		}
	}
	return out, nil
}

// patch changes the open elements of source as a delta says: each of
// upsert becomes the open version of its key and declaration (unless it
// is already), each local key of drop is closed, and every other open
// element is restamped with the delta's content hash (events.Restamp),
// all at seq. It returns how many elements are open after.
func (t *elementTable) patch(conn *sqlite.Conn, seq int64, source, hash string, upsert []elementValue, drop []string) (int, error) {
	current, err := t.openBySource(conn, source)
	if err != nil {
		return 0, err
	}
	open := len(current)
	for _, lk := range drop {
		if _, had := current[lk]; !had {
			continue
		}
		if err := t.rows.drop(conn, elementKey(source, lk), seq); err != nil {
			return 0, err
		}
		delete(current, lk)
		open--
		if t.rows.bulk {
			delete(t.bySource[source], lk)
		}
	}
	for _, el := range upsert {
		lk := localKey(el.key, el.ordinal)
		raw, err := events.MarshalPayload(el.value)
		if err != nil {
			return 0, err
		}
		old, had := current[lk]
		if had && old == string(raw) {
			continue
		}
		if err := t.rows.put(conn, elementKey(source, lk), seq, &element{key: el.key, source: source, ordinal: el.ordinal, json: string(raw), cols: el.cols}); err != nil {
			return 0, err
		}
		current[lk] = string(raw)
		if !had {
			open++
		}
		if t.rows.bulk {
			if t.bySource[source] == nil {
				t.bySource[source] = map[string]bool{}
			}
			t.bySource[source][lk] = true
		}
	}
	upserted := map[string]bool{}
	for _, el := range upsert {
		upserted[localKey(el.key, el.ordinal)] = true
	}
	keys := make([]string, 0, len(current))
	for lk := range current {
		if !upserted[lk] {
			keys = append(keys, lk)
		}
	}
	sort.Strings(keys)
	for _, lk := range keys {
		el, err := restamped(t.name, lk, current[lk], hash)
		if err != nil {
			return 0, fmt.Errorf("%s %q of %s: %w", t.name, lk, source, err)
		}
		if el == nil {
			continue
		}
		raw, err := events.MarshalPayload(el.value)
		if err != nil {
			return 0, err
		}
		if err := t.rows.put(conn, elementKey(source, lk), seq, &element{key: el.key, source: source, ordinal: el.ordinal, json: string(raw), cols: el.cols}); err != nil {
			return 0, err
		}
	}
	return open, nil
}

// restamped returns the element of table name stored as raw under local
// key lk with its source reference restamped with hash (events.Restamp),
// or nil when that changes nothing.
func restamped(name, lk, raw, hash string) (*elementValue, error) {
	ord, key, _ := strings.Cut(lk, ":")
	ordinal, _ := strconv.Atoi(ord)
	switch name {
	case "item":
		it, err := restampAs(raw, hash, events.DecodeWorkItem, func(it *events.WorkItem) *events.SourceRef { return &it.Source })
		if it == nil || err != nil {
			return nil, err
		}
		return &elementValue{key: key, ordinal: ordinal, value: *it, cols: map[string]string{
			":title": it.Title, ":status": it.Status, ":priority": it.Priority, ":goal": it.Goal}}, nil
	case "goal":
		g, err := restampAs(raw, hash, unmarshalInto[events.Goal], func(g *events.Goal) *events.SourceRef { return &g.Source })
		if g == nil || err != nil {
			return nil, err
		}
		return &elementValue{key: key, value: *g, cols: map[string]string{":title": g.Title, ":status": g.Status}}, nil
	default:
		r, err := restampAs(raw, hash, unmarshalInto[events.Rule], func(r *events.Rule) *events.SourceRef { return &r.Source })
		if r == nil || err != nil {
			return nil, err
		}
		return &elementValue{key: key, value: *r, cols: map[string]string{":strength": r.Strength}}, nil
	}
}

// restampAs decodes raw as a T and returns it with its source reference
// (source) restamped with hash, or nil when the reference has no content
// hash or has hash already.
func restampAs[T any](raw, hash string, decode func([]byte, *T) error, source func(*T) *events.SourceRef) (*T, error) {
	var v T
	if err := decode([]byte(raw), &v); err != nil {
		return nil, err
	}
	ref := source(&v)
	if ref.ContentHash == "" || ref.ContentHash == hash {
		return nil, nil
	}
	events.Restamp(ref, hash)
	return &v, nil
}

// unmarshalInto is json.Unmarshal into a *T.
func unmarshalInto[T any](b []byte, v *T) error { return json.Unmarshal(b, v) }

// SourcesAt lists the sources indexed as of rev; head says rev is the log's
// head, which reads only current rows.
func SourcesAt(conn *sqlite.Conn, rev int64, head bool) ([]Source, error) {
	var out []Source
	name := "source_list_at"
	if head {
		name = "source_list_head"
	}
	err := query(conn, name, func(st *sqlite.Stmt) {
		if !head {
			st.SetInt64(":rev", rev)
		}
	}, func(st *sqlite.Stmt) error {
		s := Source{
			Path: st.GetText("path"), Adapter: st.GetText("adapter"), Role: st.GetText("role"),
			ContentHash: st.GetText("content_hash"), OptionsHash: st.GetText("options_hash"), Size: st.GetInt64("size"), ModTimeMS: st.GetInt64("mtime_ms"),
			ItemCount: int(st.GetInt64("item_count")), IndexedAt: st.GetInt64("indexed_at"), Revision: st.GetInt64("valid_from"),
		}
		if err := json.Unmarshal([]byte(st.GetText("issues")), &s.Issues); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	return out, err
}

func scanItems(conn *sqlite.Conn, name string, room int, bind func(st *sqlite.Stmt)) ([]WorkItem, error) {
	// room is what the caller expects: a whole register wants room for
	// hundreds at once (append's doubling from one item copied a 150-item
	// register's 352-byte items twice over, where the pages of a large
	// allocation that stay unused are never touched, nor faulted in); a
	// lookup by key wants one, or each of the lookups a claim makes along
	// a dependency closure allocates and clears 90 KB for the collector.
	out := make([]WorkItem, 0, room)
	var buf []byte // one buffer for every row's JSON: Unmarshal keeps none of it
	err := query(conn, name, bind, func(st *sqlite.Stmt) error {
		out = append(out, WorkItem{})
		it := &out[len(out)-1] // decoded in place: a copy per item escaped
		n := st.GetLen("item")
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		st.GetBytes("item", buf)
		if err := events.DecodeWorkItem(buf, &it.WorkItem); err != nil {
			return err
		}
		it.SourcePath = st.GetText("source_path")
		it.Ordinal = int(st.GetInt64("ordinal"))
		return nil
	})
	if len(out) == 0 {
		out = nil // as before: no items is a nil list
	}
	return out, err
}

// WorkItemsAt lists every work item as of rev, by key then source; head
// says rev is the log's head, where only the current rows are read.
func WorkItemsAt(conn *sqlite.Conn, rev int64, head bool) ([]WorkItem, error) {
	if head {
		// Only the current rows, through their partial index: the
		// register's history (every version a re-index replaced) is
		// not read at the head.
		items, err := scanItems(conn, "item_list_current", 256, func(*sqlite.Stmt) {})
		return mergeSources(items), err
	}
	return scanItems(conn, "item_list_at", 256, func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) })
}

// mergeSources puts items, as the current rows' index gives them (by
// source, then key and ordinal), in key, source and ordinal order, as
// item_list_at sorts them: one merge of the sources' runs, where an ORDER
// BY key would sort in a temporary b-tree whose setup costs more than the
// rows.
func mergeSources(items []WorkItem) []WorkItem {
	var runs [][]WorkItem
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].SourcePath == items[i].SourcePath {
			j++
		}
		runs = append(runs, items[i:j])
		i = j
	}
	if len(runs) < 2 {
		return items
	}
	out := make([]WorkItem, 0, len(items))
	for len(out) < len(items) {
		best := -1
		for r, run := range runs {
			if len(run) > 0 && (best < 0 || cmp.Or(strings.Compare(run[0].Key, runs[best][0].Key), strings.Compare(run[0].SourcePath, runs[best][0].SourcePath)) < 0) {
				best = r
			}
		}
		out = append(out, runs[best][0])
		runs[best] = runs[best][1:]
	}
	return out
}

// WorkItemAt returns the work items with key as of rev: one normally, more
// when two sources declare the same key.
func WorkItemAt(conn *sqlite.Conn, key string, rev int64) ([]WorkItem, error) {
	return scanItems(conn, "item_by_key_at", 1, keyAt(":key", key, rev))
}

// GoalsAt lists goals as of rev.
func GoalsAt(conn *sqlite.Conn, rev int64) ([]events.Goal, error) {
	return queryRows(conn, "goal_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }, jsonColumn[events.Goal]("goal"))
}

// RulesAt lists rules as of rev.
func RulesAt(conn *sqlite.Conn, rev int64) ([]events.Rule, error) {
	return queryRows(conn, "rule_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }, jsonColumn[events.Rule]("rule"))
}

// ItemChangedAfter returns the first seq in (from, rev] at which a version
// of work item key began or ended (a source_indexed event changed it), or
// 0 when none did.
func ItemChangedAfter(conn *sqlite.Conn, key string, from, rev int64) (int64, error) {
	return queryInt64(conn, "item_changed_between", "seq", func(st *sqlite.Stmt) {
		st.SetText(":key", key)
		st.SetInt64(":from", from)
		st.SetInt64(":rev", rev)
	})
}

// ItemVersion is one version of a work item and the seq it began at.
type ItemVersion struct {
	WorkItem
	From int64
}

// ItemVersionsSince lists the versions of work item key that began in
// (from, rev], oldest first.
func ItemVersionsSince(conn *sqlite.Conn, key string, from, rev int64) ([]ItemVersion, error) {
	var out []ItemVersion
	err := query(conn, "item_versions_since", func(st *sqlite.Stmt) {
		st.SetText(":key", key)
		st.SetInt64(":from", from)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		var it WorkItem
		if err := json.Unmarshal([]byte(st.GetText("item")), &it.WorkItem); err != nil {
			return err
		}
		it.SourcePath = st.GetText("source_path")
		out = append(out, ItemVersion{WorkItem: it, From: st.GetInt64("valid_from")})
		return nil
	})
	return out, err
}
