package projections

import (
	"encoding/json"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Source is the read model of one indexed source file.
type Source struct {
	Path        string               `json:"path"`
	Adapter     string               `json:"adapter"`
	Role        string               `json:"role,omitempty"`
	ContentHash string               `json:"content_hash"`
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
}

// work projects source_indexed events into sources, work items, goals and
// rules. A new index of a source replaces exactly the elements that changed.
type work struct{ base }

func newWork() *work {
	return &work{base{name: "work", version: 1, schema: "work", tables: []Table{
		{Name: "p_sources", Key: []string{"path"}, Temporal: true},
		{Name: "p_work_items", Key: []string{"key", "source_path"}, Temporal: true},
		{Name: "p_goals", Key: []string{"key", "source_path"}, Temporal: true},
		{Name: "p_rules", Key: []string{"key", "source_path"}, Temporal: true},
	}}}
}

func (p *work) Apply(conn *sqlite.Conn, e *events.Event) error {
	if e.Kind != events.KindSourceIndexed {
		return nil
	}
	pl, err := payload[events.SourceIndexed](e)
	if err != nil {
		return err
	}
	if err := exec(conn, "source_close", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", e.Seq)
		st.SetText(":path", pl.Path)
	}); err != nil {
		return err
	}
	if !pl.Removed {
		issues := pl.Issues
		if issues == nil {
			issues = []events.SourceIssue{}
		}
		raw, _ := json.Marshal(issues)
		if err := exec(conn, "source_insert", func(st *sqlite.Stmt) {
			st.SetText(":path", pl.Path)
			st.SetText(":adapter", pl.Adapter)
			st.SetText(":role", pl.Role)
			st.SetText(":content_hash", pl.ContentHash)
			st.SetInt64(":size", pl.Size)
			st.SetInt64(":mtime_ms", pl.ModTimeMS)
			st.SetInt64(":item_count", int64(len(pl.Items)))
			st.SetText(":issues", string(raw))
			st.SetInt64(":indexed_at", e.OccurredAt)
			st.SetInt64(":valid_from", e.Seq)
		}); err != nil {
			return err
		}
	}
	var items, goals, rules []element
	for _, it := range pl.Items {
		items = append(items, element{key: it.Key, value: it, cols: map[string]string{
			":title": it.Title, ":status": it.Status, ":priority": it.Priority, ":goal": it.Goal}})
	}
	for _, g := range pl.Goals {
		goals = append(goals, element{key: g.Key, value: g, cols: map[string]string{":title": g.Title, ":status": g.Status}})
	}
	for _, r := range pl.Rules {
		rules = append(rules, element{key: r.Key, value: r, cols: map[string]string{":strength": r.Strength}})
	}
	if err := syncElements(conn, e.Seq, pl.Path, "item", items); err != nil {
		return err
	}
	if err := syncElements(conn, e.Seq, pl.Path, "goal", goals); err != nil {
		return err
	}
	return syncElements(conn, e.Seq, pl.Path, "rule", rules)
}

// element is one keyed thing parsed from a source: its JSON value and the
// extra indexed columns of its table.
type element struct {
	key   string
	value any
	cols  map[string]string
}

// syncElements makes the current rows of one source's items (or goals, or
// rules) equal to want, stamping changes at seq. The first of duplicate keys
// wins; duplicates are reported by intake, not resolved here.
func syncElements(conn *sqlite.Conn, seq int64, source, table string, want []element) error {
	valueCol := map[string]string{"item": "item", "goal": "goal", "rule": "rule"}[table]
	current := map[string]string{}
	if err := query(conn, table+"_current_by_source", func(st *sqlite.Stmt) {
		st.SetText(":source_path", source)
	}, func(st *sqlite.Stmt) error {
		current[st.GetText("key")] = st.GetText(valueCol)
		return nil
	}); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, el := range want {
		if seen[el.key] {
			continue
		}
		seen[el.key] = true
		raw, err := events.MarshalPayload(el.value)
		if err != nil {
			return err
		}
		old, had := current[el.key]
		if had && old == string(raw) {
			continue
		}
		if had {
			if err := closeElement(conn, table, seq, source, el.key); err != nil {
				return err
			}
		}
		if err := exec(conn, table+"_insert", func(st *sqlite.Stmt) {
			st.SetText(":key", el.key)
			st.SetText(":source_path", source)
			st.SetText(":"+valueCol, string(raw))
			for k, v := range el.cols {
				st.SetText(k, v)
			}
			st.SetInt64(":valid_from", seq)
		}); err != nil {
			return err
		}
	}
	for key := range current {
		if !seen[key] {
			if err := closeElement(conn, table, seq, source, key); err != nil {
				return err
			}
		}
	}
	return nil
}

func closeElement(conn *sqlite.Conn, table string, seq int64, source, key string) error {
	return exec(conn, table+"_close", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", seq)
		st.SetText(":source_path", source)
		st.SetText(":key", key)
	})
}

// SourcesAt lists the sources indexed as of rev.
func SourcesAt(conn *sqlite.Conn, rev int64) ([]Source, error) {
	var out []Source
	err := query(conn, "source_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }, func(st *sqlite.Stmt) error {
		s := Source{
			Path: st.GetText("path"), Adapter: st.GetText("adapter"), Role: st.GetText("role"),
			ContentHash: st.GetText("content_hash"), Size: st.GetInt64("size"), ModTimeMS: st.GetInt64("mtime_ms"),
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

func scanItems(conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt)) ([]WorkItem, error) {
	var out []WorkItem
	err := query(conn, name, bind, func(st *sqlite.Stmt) error {
		var it WorkItem
		if err := json.Unmarshal([]byte(st.GetText("item")), &it.WorkItem); err != nil {
			return err
		}
		it.SourcePath = st.GetText("source_path")
		out = append(out, it)
		return nil
	})
	return out, err
}

// WorkItemsAt lists every work item as of rev, by key then source.
func WorkItemsAt(conn *sqlite.Conn, rev int64) ([]WorkItem, error) {
	return scanItems(conn, "item_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) })
}

// WorkItemAt returns the work items with key as of rev: one normally, more
// when two sources declare the same key.
func WorkItemAt(conn *sqlite.Conn, key string, rev int64) ([]WorkItem, error) {
	return scanItems(conn, "item_by_key_at", func(st *sqlite.Stmt) {
		st.SetText(":key", key)
		st.SetInt64(":rev", rev)
	})
}

// GoalsAt lists goals as of rev.
func GoalsAt(conn *sqlite.Conn, rev int64) ([]events.Goal, error) {
	var out []events.Goal
	err := query(conn, "goal_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }, func(st *sqlite.Stmt) error {
		var g events.Goal
		if err := json.Unmarshal([]byte(st.GetText("goal")), &g); err != nil {
			return err
		}
		out = append(out, g)
		return nil
	})
	return out, err
}

// RulesAt lists rules as of rev.
func RulesAt(conn *sqlite.Conn, rev int64) ([]events.Rule, error) {
	var out []events.Rule
	err := query(conn, "rule_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }, func(st *sqlite.Stmt) error {
		var r events.Rule
		if err := json.Unmarshal([]byte(st.GetText("rule")), &r); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	return out, err
}
