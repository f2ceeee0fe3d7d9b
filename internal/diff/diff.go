// Package diff compares the read models of one project at two revisions
// (`awr diff`): it reads the events between them, derives the entities
// they touched (sessions, claims, checkpoints, knowledge, work items,
// bindings, seats), reads each as of both revisions with the temporal
// reads of projections, and compares them field by field, so its cost
// follows what changed, never the length of the log.
package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// Request is what a diff compares: revisions From and To (the head when
// nil), in every read model or only in what concerns one work item,
// session or seat (at most one of them). The door's DiffRequest, the
// operation's one declaration, converts to it.
type Request struct {
	From    int64
	To      *int64
	Work    string
	Session string
	Seat    string
	// All keeps the bookkeeping fields (Bookkeeping) a diff leaves out.
	All bool
	// Limit is the page of events and of changed entities, each
	// (commands.DefaultPage when nil).
	Limit *int
	// EventsCursor and ChangesCursor are the events_next_cursor and
	// changes_next_cursor of the page before ("" for the first).
	EventsCursor, ChangesCursor string
	// Whole asks for every event and every changed entity.
	Whole bool
}

// Event is one event between the two revisions, with a short summary
// of its payload (awr log --json shows it whole).
type Event struct {
	Seq        int64  `json:"seq"`
	Kind       string `json:"kind"`
	Stream     string `json:"stream"`
	Actor      string `json:"actor"`
	OccurredAt int64  `json:"occurred_at"`
	Summary    string `json:"summary"`
}

// Field is one field of an entity that differs: its JSON value as of
// From (null when the entity or the field did not exist) and as of To.
// A nested object's fields are compared one by one (source.line_start).
type Field struct {
	Field  string          `json:"field"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// Entity is one entity of a read model that differs between the two
// revisions: added (absent at From), removed (absent at To) or changed.
type Entity struct {
	ID string `json:"id"`
	// Work is the work item the entity belongs to, when it has one.
	Work   string  `json:"work,omitempty"`
	Change string  `json:"change"`
	Fields []Field `json:"fields"`
}

// Entity changes of a diff.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Changes is what changed in each read model.
type Changes struct {
	Sessions    []Entity `json:"sessions"`
	Claims      []Entity `json:"claims"`
	Checkpoints []Entity `json:"checkpoints"`
	// Knowledge is the loops, decisions, facts and hypotheses.
	Knowledge []Entity `json:"knowledge"`
	WorkItems []Entity `json:"work_items"`
	Bindings  []Entity `json:"bindings"`
	Seats     []Entity `json:"seats"`
}

// Read is what a diff read: the events between the revisions and the
// entities they touched, each read as of both revisions. It depends on
// what changed, never on the length of the log.
type Read struct {
	Events   int `json:"events"`
	Entities int `json:"entities"`
}

// Result is `awr diff`.
type Result struct {
	ProjectRevision int64   `json:"project_revision"`
	From            int64   `json:"from"`
	To              int64   `json:"to"`
	Work            string  `json:"work,omitempty"`
	Session         string  `json:"session,omitempty"`
	Seat            string  `json:"seat,omitempty"`
	Events          []Event `json:"events"`
	Changes         Changes `json:"changes"`
	// Changed is the number of entities that differ.
	Changed int  `json:"changed"`
	Read    Read `json:"read"`
	// All says the bookkeeping fields were kept (--all).
	All bool `json:"all,omitempty"`
	// Hidden counts the bookkeeping fields left out (without --all): a
	// source's content hash and an item's place in its file change for
	// every item of a file when one item does, and say nothing of the
	// item itself. An entity whose only changes are those is left out.
	Hidden int `json:"hidden"`
	// EventsTotal counts the events between the revisions in the scope;
	// Events is a page of them (oldest first) and EventsNextCursor, when
	// more follow, the --events-cursor of the next.
	EventsTotal      int    `json:"events_total"`
	EventsNextCursor string `json:"events_next_cursor,omitempty"`
	// ChangesNextCursor, when more changed entities follow those of
	// Changes (Changed counts them all, in the order sessions, claims,
	// checkpoints, knowledge, work items, bindings, seats), is the
	// --changes-cursor of the next page.
	ChangesNextCursor string `json:"changes_next_cursor,omitempty"`
}

// Bookkeeping reports whether a field (a flattened name, parent.child)
// is bookkeeping: the hash of a whole source file carried by each of its
// items, an item's lines in its file, and the index's own counters. awr
// diff shows them only with --all.
func Bookkeeping(field string) bool {
	leaf := field[strings.LastIndex(field, ".")+1:]
	switch leaf {
	case "content_hash", "options_hash", "revision_indexed", "mtime_ms", "indexed_at":
		return true
	case "line_start", "line_end":
		return strings.HasPrefix(field, "source.")
	}
	return false
}

// Check refuses a request before any read: more than one of --work,
// --session and --seat, or a negative revision (InvalidInput).
func Check(req Request) error {
	scopes := 0
	for _, s := range []string{req.Work, req.Session, req.Seat} {
		if s != "" {
			scopes++
		}
	}
	if scopes > 1 {
		return fault.New(fault.InvalidInput, "diff: give at most one of --work, --session and --seat").
			WithHint("awr diff --from %d", req.From)
	}
	if err := commands.RevisionOf("diff", "--from", req.From); err != nil {
		return err
	}
	if req.To != nil {
		if err := commands.RevisionOf("diff", "--to", *req.To); err != nil {
			return err
		}
	}
	if req.Whole && req.Limit != nil {
		return fault.New(fault.InvalidInput, "diff: give --limit or --whole, not both").
			With("flag", "--whole").WithHint("awr diff --from %d --whole", req.From)
	}
	_, err := commands.LimitOf("diff", "--limit", req.Limit, commands.DefaultPage)
	return err
}

// page is the part of a diff's lists an answer holds: at most limit
// events after seq after and changed entities after the first skip
// (limit < 0: all of them).
type page struct {
	limit       int
	after       int64
	skip, shown int
	lastSeq     int64
}

// pageOf decodes req's limit and cursors; first is the command of the
// first page (the hint of a cursor awr did not give).
func pageOf(req Request, first string) (*page, error) {
	pg := &page{limit: -1}
	if !req.Whole {
		pg.limit, _ = commands.LimitOf("diff", "--limit", req.Limit, commands.DefaultPage)
	}
	var err error
	if pg.after, err = cursor.DecodeSeq("diff", "--events-cursor", req.EventsCursor, first); err != nil {
		return nil, err
	}
	skip, err := cursor.DecodeSeq("diff", "--changes-cursor", req.ChangesCursor, first)
	pg.skip = int(skip)
	return pg, err
}

// holds reports whether a list of which n are already in the page has
// room for one more.
func (pg *page) holds(n int) bool { return pg.limit < 0 || n < pg.limit }

// On compares every read model as of req.From and as of req.To (head
// when nil) on conn, a read of the log at head. Errors: InvalidInput for
// a revision beyond the head or From after To; NotFound for a work item,
// session or seat unknown at To.
func On(conn *sqlite.Conn, head int64, req Request) (*Result, error) {
	res := &Result{ProjectRevision: head, From: req.From, Work: req.Work, Session: req.Session, Seat: req.Seat, All: req.All, Events: []Event{}}
	to := head
	if req.To != nil {
		to = *req.To
	}
	switch {
	case req.From > head:
		return nil, fault.New(fault.InvalidInput, "diff: --from %d is beyond project_revision %d", req.From, head).
			With("from", req.From).With("project_revision", head).WithHint("awr diff --from %d", head)
	case to > head:
		return nil, fault.New(fault.InvalidInput, "diff: --to %d is beyond project_revision %d", to, head).
			With("to", to).With("project_revision", head).WithHint("awr diff --from %d", req.From)
	case req.From > to:
		return nil, fault.New(fault.InvalidInput, "diff: --from %d is after --to %d", req.From, to).
			With("from", req.From).With("to", to).WithHint("awr diff --from %d --to %d", to, req.From)
	}
	res.To = to
	pg, err := pageOf(req, fmt.Sprintf("awr diff --from %d --to %d", req.From, to))
	if err != nil {
		return nil, err
	}
	d := &differ{conn: conn, req: req, from: req.From, to: to, touched: newTouched(), seatOf: map[string]string{}, page: pg}
	if err := d.known(); err != nil {
		return nil, err
	}
	if err := d.scan(res); err != nil {
		return nil, err
	}
	if err := d.compare(res); err != nil {
		return nil, err
	}
	if len(res.Events) > 0 && res.Events[len(res.Events)-1].Seq < pg.lastSeq {
		res.EventsNextCursor = cursor.EncodeSeq(res.Events[len(res.Events)-1].Seq)
	}
	if res.Changed > pg.skip+pg.shown && pg.shown > 0 {
		res.ChangesNextCursor = cursor.EncodeSeq(int64(pg.skip + pg.shown))
	}
	return res, nil
}

// touched is the set of entities the events between the revisions name,
// per read model.
type touched map[string]map[string]bool

func newTouched() touched { return touched{} }

func (t touched) add(model, id string) {
	if id == "" {
		return
	}
	if t[model] == nil {
		t[model] = map[string]bool{}
	}
	t[model][id] = true
}

// ids returns the ids of model, sorted.
func (t touched) ids(model string) []string {
	out := make([]string, 0, len(t[model]))
	for id := range t[model] {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// The read models a diff compares, as touched keys.
const (
	mSessions    = "sessions"
	mClaims      = "claims"
	mCheckpoints = "checkpoints"
	mKnowledge   = "knowledge"
	mItems       = "work_items"
	mBindings    = "bindings"
	mSeats       = "seats"
)

// refs are the entity references any payload may carry, read by name from
// its JSON: every kind names its session, work item, claim, checkpoint,
// host conversation or seat under these fields.
type refs struct {
	SessionID   string `json:"session_id"`
	FromSession string `json:"from_session"`
	Predecessor string `json:"predecessor_id"`
	ToSession   string `json:"to_session"`
	Work        string `json:"work"`
	ClaimID     string `json:"claim_id"`
	Checkpoint  string `json:"checkpoint_id"`
	External    string `json:"external_session"`
	Address     string `json:"address"`
	Path        string `json:"path"`
	Items       []struct {
		Key string `json:"key"`
	} `json:"items"`
	Delta   bool `json:"delta"`
	Dropped struct {
		Items []struct {
			Key string `json:"key"`
		} `json:"items"`
	} `json:"dropped"`
}

type differ struct {
	conn     *sqlite.Conn
	req      Request
	from, to int64
	touched  touched
	// seatOf caches the seat of each session ("" for none).
	seatOf map[string]string
	// sessions are the sessions of the --seat scope.
	sessions map[string]bool
	// scanned counts the events read, reads the entity versions read.
	scanned, reads int
	// page is the part of the lists the answer holds.
	page *page
}

// known checks that the scope's work item, session or seat exists at To.
func (d *differ) known() error {
	switch {
	case d.req.Work != "":
		return commands.KnownWork(d.conn, "diff", d.req.Work, d.to)
	case d.req.Session != "":
		s, err := projections.SessionAt(d.conn, d.req.Session, d.to)
		if err != nil {
			return err
		}
		if s == nil {
			return fault.New(fault.NotFound, "diff: session %s not found at revision %d", d.req.Session, d.to).
				With("session_id", d.req.Session).WithHint("awr session list")
		}
	case d.req.Seat != "":
		log, err := projections.SeatLogAt(d.conn, d.req.Seat, d.to)
		if err != nil {
			return err
		}
		if len(log) == 0 {
			return fault.New(fault.NotFound, "diff: seat %s not found at revision %d", d.req.Seat, d.to).
				With("address", d.req.Seat).WithHint("awr seat list")
		}
	}
	return nil
}

// seat returns the seat that launched or adopted session, cached.
func (d *differ) seat(session string) (string, error) {
	if a, ok := d.seatOf[session]; ok {
		return a, nil
	}
	a, err := projections.SeatOfSession(d.conn, session)
	d.seatOf[session] = a
	return a, err
}

// scan reads the events in (from, to] of the scope and records what they
// touch.
func (d *differ) scan(res *Result) error {
	f := projections.LogFilter{Work: d.req.Work, Session: d.req.Session, Since: d.from, Limit: -1}
	if d.from == d.to {
		return nil
	}
	d.sessions = map[string]bool{}
	return projections.ScanLog(d.conn, f, d.to, -1, func(e *events.Event) error {
		d.scanned++
		var rf refs
		if err := json.Unmarshal(e.Payload, &rf); err != nil {
			return fault.Wrap(fault.Storage, err, "diff: event %d (%s)", e.Seq, e.Kind)
		}
		sessions := []string{rf.SessionID, rf.FromSession, rf.Predecessor, rf.ToSession}
		if d.req.Seat != "" {
			in := rf.Address == d.req.Seat
			for _, s := range sessions {
				if s == "" {
					continue
				}
				a, err := d.seat(s)
				if err != nil {
					return err
				}
				if a == d.req.Seat {
					in = true
					d.sessions[s] = true
				}
			}
			if !in {
				return nil
			}
		}
		res.EventsTotal++
		d.page.lastSeq = e.Seq
		if e.Seq > d.page.after && d.page.holds(len(res.Events)) {
			res.Events = append(res.Events, Event{Seq: e.Seq, Kind: string(e.Kind), Stream: e.Stream, Actor: e.Actor, OccurredAt: e.OccurredAt, Summary: summarize(e.Stream, e.Payload)})
		}
		if e.Kind == events.KindSourceIndexed {
			return d.sourceIndexed(e, rf)
		}
		for _, s := range sessions {
			d.touched.add(mSessions, s)
			if s == "" {
				continue
			}
			a, err := d.seat(s)
			if err != nil {
				return err
			}
			d.touched.add(mSeats, a)
		}
		d.touched.add(mClaims, rf.ClaimID)
		d.touched.add(mCheckpoints, rf.Checkpoint)
		d.touched.add(mBindings, rf.External)
		d.touched.add(mSeats, rf.Address)
		d.touched.add(mKnowledge, rf.Work)
		return nil
	})
}

// sourceIndexed records the work items an index may have changed: those
// it lists and those the source's previous index listed (an item it no
// longer lists was removed); for a delta, those it lists and those it
// drops.
func (d *differ) sourceIndexed(e *events.Event, rf refs) error {
	keys := map[string]bool{}
	for _, it := range rf.Items {
		keys[it.Key] = true
	}
	if rf.Delta {
		// A delta names what it changed and dropped; every other item
		// of the source it restamped with its content hash.
		for _, it := range rf.Dropped.Items {
			keys[it.Key] = true
		}
		items, err := projections.WorkItemsAt(d.conn, e.Seq, false)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.SourcePath == rf.Path {
				keys[it.Key] = true
			}
		}
		d.touchItems(keys)
		return nil
	}
	prev, err := projections.SourceIndexedBefore(d.conn, rf.Path, e.Seq)
	if err != nil {
		return err
	}
	if prev > 0 {
		err := events.ScanEvents(d.conn, prev, prev, func(pe *events.Event) error {
			d.scanned++
			var old refs
			if err := json.Unmarshal(pe.Payload, &old); err != nil {
				return fault.Wrap(fault.Storage, err, "diff: event %d (%s)", pe.Seq, pe.Kind)
			}
			for _, it := range old.Items {
				keys[it.Key] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	d.touchItems(keys)
	return nil
}

// touchItems records the work item keys within the scope as touched.
func (d *differ) touchItems(keys map[string]bool) {
	for k := range keys {
		if d.req.Work == "" || k == d.req.Work {
			d.touched.add(mItems, k)
		}
	}
}

// version is one entity as of one revision, keyed for comparison.
type version struct {
	id, work string
	v        any
}

// model is one read model a diff compares: its touched key, where its
// changes go, and how an entity of it reads as of a revision (none when
// it did not exist or lies outside the scope).
type model struct {
	name string
	out  *[]Entity
	read func(id string, rev int64) ([]version, error)
}

// models is the table of the read models a diff compares, their changes
// going to c.
func (d *differ) models(c *Changes) []model {
	one := func(id, work string, v any, ok bool) []version {
		if !ok {
			return nil
		}
		return []version{{id: id, work: work, v: v}}
	}
	return []model{
		{mSessions, &c.Sessions, func(id string, rev int64) ([]version, error) {
			s, err := projections.SessionAt(d.conn, id, rev)
			if err != nil || s == nil {
				return nil, err
			}
			return one(id, s.Work, s, d.inScope(s.Work, s.ID, s.PredecessorID, s.SuccessorID)), nil
		}},
		{mClaims, &c.Claims, func(id string, rev int64) ([]version, error) {
			cl, err := projections.ClaimAt(d.conn, id, rev)
			if err != nil || cl == nil {
				return nil, err
			}
			return one(id, cl.Work, cl, d.inScope(cl.Work, cl.SessionID)), nil
		}},
		{mCheckpoints, &c.Checkpoints, func(id string, rev int64) ([]version, error) {
			ck, err := projections.CheckpointAt(d.conn, id, rev)
			if err != nil || ck == nil {
				return nil, err
			}
			return one(id, ck.Work, ck, d.inScope(ck.Work, ck.SessionID)), nil
		}},
		{mKnowledge, &c.Knowledge, func(work string, rev int64) ([]version, error) {
			if d.req.Work != "" && work != d.req.Work {
				return nil, nil
			}
			ks, err := projections.KnowledgeAt(d.conn, work, rev)
			if err != nil {
				return nil, err
			}
			var out []version
			for i := range ks {
				k := &ks[i]
				if d.inScope(work, k.OpenedSession, k.ClosedSession) {
					out = append(out, version{id: k.ID, work: work, v: k})
				}
			}
			return out, nil
		}},
		{mItems, &c.WorkItems, func(key string, rev int64) ([]version, error) {
			items, err := projections.WorkItemAt(d.conn, key, rev)
			if err != nil {
				return nil, err
			}
			var out []version
			for i := range items {
				id := key
				if i > 0 {
					id = fmt.Sprintf("%s#%d", key, i+1)
				}
				out = append(out, version{id: id, work: key, v: items[i].WorkItem})
			}
			return out, nil
		}},
		{mBindings, &c.Bindings, func(id string, rev int64) ([]version, error) {
			b, err := projections.BindingAt(d.conn, id, rev)
			if err != nil || b == nil {
				return nil, err
			}
			return one(id, b.Work, b, d.inScope(b.Work, b.SessionID)), nil
		}},
		{mSeats, &c.Seats, func(id string, rev int64) ([]version, error) {
			if d.req.Seat != "" && id != d.req.Seat {
				return nil, nil
			}
			s, err := projections.SeatAt(d.conn, id, rev)
			if err != nil || s == nil {
				return nil, err
			}
			return one(id, s.Work, s, true), nil
		}},
	}
}

// compare reads every touched entity as of both revisions, counts those
// that differ within the scope, and keeps the page's.
func (d *differ) compare(res *Result) error {
	for _, m := range d.models(&res.Changes) {
		*m.out = []Entity{}
		for _, id := range d.touched.ids(m.name) {
			before, err := m.read(id, d.from)
			if err != nil {
				return err
			}
			after, err := m.read(id, d.to)
			if err != nil {
				return err
			}
			d.reads += len(before) + len(after)
			ents, hidden, err := diffVersions(before, after, d.req.All)
			if err != nil {
				return err
			}
			res.Hidden += hidden
			for _, e := range ents {
				res.Changed++
				if res.Changed > d.page.skip && d.page.holds(d.page.shown) {
					*m.out = append(*m.out, e)
					d.page.shown++
				}
			}
		}
	}
	res.Read = Read{Events: d.scanned, Entities: d.reads}
	return nil
}

// inScope reports whether an entity of work, whose sessions are sessions,
// belongs to the diff's scope.
func (d *differ) inScope(work string, sessions ...string) bool {
	switch {
	case d.req.Work != "":
		return work == d.req.Work
	case d.req.Session != "":
		return contains(sessions, d.req.Session)
	case d.req.Seat != "":
		for _, s := range sessions {
			if d.sessions[s] {
				return true
			}
		}
		return false
	}
	return true
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s && s != "" {
			return true
		}
	}
	return false
}

// diffVersions compares the versions of one entity (or of one work
// item's knowledge, or of a key's work items) as of both revisions.
func diffVersions(before, after []version, all bool) ([]Entity, int, error) {
	type pair struct {
		work   string
		b, a   map[string]json.RawMessage
		bo, ao bool
	}
	var order []string
	pairs := map[string]*pair{}
	get := func(v version) *pair {
		p, ok := pairs[v.id]
		if !ok {
			p = &pair{work: v.work}
			pairs[v.id] = p
			order = append(order, v.id)
		}
		return p
	}
	for _, v := range before {
		f, err := flatten(v.v)
		if err != nil {
			return nil, 0, err
		}
		p := get(v)
		p.b, p.bo = f, true
	}
	for _, v := range after {
		f, err := flatten(v.v)
		if err != nil {
			return nil, 0, err
		}
		p := get(v)
		p.a, p.ao = f, true
		p.work = v.work
	}
	var out []Entity
	hidden := 0
	for _, id := range order {
		p := pairs[id]
		fields := diffFields(p.b, p.a)
		if !all && p.bo && p.ao {
			// An entity added or removed shows whole; a changed one shows
			// what changed in it, not in the file it came from.
			kept := fields[:0]
			for _, f := range fields {
				if Bookkeeping(f.Field) {
					hidden++
					continue
				}
				kept = append(kept, f)
			}
			fields = kept
		}
		if len(fields) == 0 {
			continue
		}
		change := Changed
		switch {
		case !p.bo:
			change = Added
		case !p.ao:
			change = Removed
		}
		out = append(out, Entity{ID: id, Work: p.work, Change: change, Fields: fields})
	}
	return out, hidden, nil
}

// ignoredFields are bookkeeping every new version changes.
var ignoredFields = map[string]bool{"revision": true}

// flatten turns v's JSON form into its leaf fields: a nested object's
// fields are named parent.child; arrays and scalars are leaves.
func flatten(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{}
	var walk func(prefix string, raw json.RawMessage) error
	walk = func(prefix string, raw json.RawMessage) error {
		var obj map[string]json.RawMessage
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' || json.Unmarshal(raw, &obj) != nil || len(obj) == 0 {
			out[prefix] = raw
			return nil
		}
		for k, v := range obj {
			name := k
			if prefix != "" {
				name = prefix + "." + k
			} else if ignoredFields[k] {
				continue
			}
			if err := walk(name, v); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk("", raw)
}

// diffFields lists the fields whose values differ, sorted by name; a
// missing field (or entity) is null.
func diffFields(b, a map[string]json.RawMessage) []Field {
	names := map[string]bool{}
	for k := range b {
		names[k] = true
	}
	for k := range a {
		names[k] = true
	}
	keys := make([]string, 0, len(names))
	for k := range names {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []Field{}
	for _, k := range keys {
		bv, av := b[k], a[k]
		if bytes.Equal(bv, av) || (isNull(bv) && isNull(av)) {
			continue
		}
		out = append(out, Field{Field: k, Before: nullIfEmpty(bv), After: nullIfEmpty(av)})
	}
	return out
}

func isNull(r json.RawMessage) bool { return len(r) == 0 || string(r) == "null" }

func nullIfEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return json.RawMessage("null")
	}
	return r
}

// summaryFields are the payload fields an event's summary shows, in order.
var summaryFields = []string{"work", "session_id", "agent", "outcome", "claim_id", "fencing_token", "reason", "from_session", "to_session",
	"checkpoint_id", "next_action", "client", "external_session", "address", "path", "verdict", "event", "key", "exit_code"}

// summarize is a short line naming what an event's payload is about; the
// session its stream already names is left out.
func summarize(stream string, payload []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(payload, &m) != nil {
		return clipRunes(string(payload), 100)
	}
	var parts []string
	for _, k := range summaryFields {
		v, ok := m[k]
		if !ok || isNull(v) || string(v) == `""` {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		if k == "session_id" && stream == "session/"+s {
			continue
		}
		parts = append(parts, k+"="+s)
	}
	if items, ok := m["items"]; ok {
		var list []json.RawMessage
		if json.Unmarshal(items, &list) == nil {
			parts = append(parts, fmt.Sprintf("items=%d", len(list)))
		}
	}
	return clipRunes(strings.Join(parts, " "), 160)
}

// clipRunes shortens s to at most n runes, marking the cut.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
