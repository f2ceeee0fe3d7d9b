package projections

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// The kinds of document the search projection indexes.
const (
	SearchWork       = "work"
	SearchCheckpoint = "checkpoint"
	SearchLoop       = events.KnowledgeLoop
	SearchDecision   = events.KnowledgeDecision
	SearchFact       = events.KnowledgeFact
	SearchHypothesis = events.KnowledgeHypothesis
	SearchExecution  = "execution"
)

// SearchKinds lists every kind of document search finds, in the order
// the docs give them.
var SearchKinds = []string{SearchWork, SearchCheckpoint, SearchLoop, SearchDecision, SearchFact, SearchHypothesis, SearchExecution}

// searchDoc is one version of one indexed document: a work item as its
// source declares it, a checkpoint, a knowledge item (with its state) or
// an execution (its key, purpose and command line).
type searchDoc struct {
	doc, kind, ref, work, session, source, state string
	seq                                          int64
	title, body                                  string
}

type search struct {
	base
	rows versions[searchDoc]
	// bulk marks a rebuild: the rows are written as the incremental path
	// writes them, in the same order (so with the same ids), through the
	// two indexes the fold reads, which are there from the start and hold
	// only open rows (base.fold); the index of every version (unique: a
	// log with two versions of a document at one seq still fails the
	// rebuild, at its end) and the full-text index wait for EndBulk, which
	// fills each in one pass. Nothing is held in memory: a rebuild's memory
	// does not grow with the documents (every checkpoint is one).
	bulk bool
	// pending lists the work items' open versions an event wrote whose
	// words wait for the event's end (flushTerms): written then in rank
	// order, in one statement, rather than a version at a time.
	pending []int64
	// pendingDF counts the pending versions' words ("" counts the
	// versions), added to p_search_df at the event's end.
	pendingDF map[string]int64
	// namedOther is set, in a rebuild, once a checkpoint whose id is not
	// its own event's was folded: until then a checkpoint's document is
	// written without closing an open version, since none can exist.
	namedOther bool
}

// Objects adds to the tables and indexes of the search scripts the
// tables SQLite keeps the full-text indexes in (fts5's shadow tables of
// p_search_fts and p_search_head_fts, external-content tables, and of
// the tokenizer table p_search_tok): one missing breaks the index as surely as the index
// itself missing.
//
// The open work items' words and counts (p_search_term, p_search_df)
// are, like p_search_fts, an index of p_search: left out of the
// checksums (Tables) and of a scratch build.
func (p *search) Objects() []string {
	return append(p.base.Objects(), "p_search_fts_data", "p_search_fts_idx", "p_search_fts_docsize", "p_search_fts_config",
		"p_search_head_fts_data", "p_search_head_fts_idx", "p_search_head_fts_docsize", "p_search_head_fts_config",
		"p_search_tok_data", "p_search_tok_idx", "p_search_tok_config")
}

func newSearch() *search {
	p := &search{base: base{name: "search", version: 3, schema: "search", tables: []Table{
		{Name: "p_search", Key: []string{"doc"}, Temporal: true},
	}, fold: []string{"p_search_open", "p_search_source"}}}
	p.rows = versions[searchDoc]{insert: p.putDoc, load: loadSearchDoc, close: p.closeDoc}
	return p
}

// BeginBulk starts a rebuild: the tables and the indexes the fold reads,
// the others and the full-text index left empty until EndBulk.
func (p *search) BeginBulk(conn *sqlite.Conn) error {
	p.bulk, p.namedOther = true, false
	if err := p.base.BeginBulk(conn); err != nil {
		return err
	}
	return p.base.createIndexesOf(conn, true)
}

// AbortBulk leaves bulk mode after a failed rebuild.
func (p *search) AbortBulk(conn *sqlite.Conn) { p.bulk = false }

// EndBulk writes the open work items' words, builds the indexes the
// fold did not read, and fills the full-text indexes from the rows
// written (each from its view of p_search).
func (p *search) EndBulk(conn *sqlite.Conn) error {
	p.bulk = false
	if !p.scratch {
		if err := fillSearchTerms(conn); err != nil {
			return fmt.Errorf("search: %w", err)
		}
	}
	if err := p.base.createIndexesOf(conn, false); err != nil {
		return fmt.Errorf("search: %w", err)
	}
	if p.scratch {
		return nil // checksummed and thrown away: p_search is all it checks
	}
	for _, fts := range []string{"p_search_fts", "p_search_head_fts"} {
		if err := sqlitex.ExecuteTransient(conn, "INSERT INTO "+fts+" ("+fts+") VALUES ('rebuild')", nil); err != nil {
			return fmt.Errorf("search: fill the full-text index %s: %w", fts, err)
		}
	}
	return nil
}

func (p *search) putDoc(conn *sqlite.Conn, d *searchDoc, from, to int64) error {
	if p.bulk {
		return insertSearchRow(conn, 0, d, from, to)
	}
	return p.putSearchDoc(conn, d, from, to)
}

// openBySource lists the documents of source path with an open version.
func (p *search) openBySource(conn *sqlite.Conn, path string) ([]string, error) {
	var open []string
	err := query(conn, "search_open_by_source", func(st *sqlite.Stmt) { st.SetText(":source", path) }, func(st *sqlite.Stmt) error {
		open = append(open, st.GetText("doc"))
		return nil
	})
	return open, err
}

// putSearchDoc writes a version incrementally: its row, its entry in
// the full-text index (p_search_head_fts for a work item's open version,
// with its words, written at the event's end; p_search_fts for any
// other).
func (p *search) putSearchDoc(conn *sqlite.Conn, d *searchDoc, from, to int64) error {
	if err := insertSearchRow(conn, 0, d, from, to); err != nil {
		return err
	}
	id := conn.LastInsertRowID()
	if d.kind != SearchWork || to != 0 {
		return insertSearchFTS(conn, "search_fts_insert", id, d.title, d.body)
	}
	if err := insertSearchFTS(conn, "search_head_fts_insert", id, d.title, d.body); err != nil {
		return err
	}
	if p.pendingDF == nil {
		p.pendingDF = map[string]int64{}
	}
	if err := putSearchTermDoc(conn, id, d.title, d.body, p.pendingDF); err != nil {
		return err
	}
	p.pending = append(p.pending, id)
	p.pendingDF[""]++
	return nil
}

// flushTerms writes the words of the versions pending, in rank order,
// and counts them in the register's counts.
func (p *search) flushTerms(conn *sqlite.Conn) error {
	if len(p.pending) == 0 {
		return nil
	}
	ids, err := json.Marshal(p.pending)
	if err != nil {
		return err
	}
	counts, err := json.Marshal(p.pendingDF)
	p.pending, p.pendingDF = p.pending[:0], nil
	if err != nil {
		return err
	}
	if err := exec(conn, "search_term_insert", func(st *sqlite.Stmt) { st.SetText(":ids", string(ids)) }); err != nil {
		return err
	}
	return exec(conn, "search_df_add", func(st *sqlite.Stmt) { st.SetText(":counts", string(counts)) })
}

// insertSearchFTS writes version id in the full-text index statement
// name writes.
func insertSearchFTS(conn *sqlite.Conn, name string, id int64, title, body string) error {
	return exec(conn, name, func(st *sqlite.Stmt) {
		st.SetInt64(":id", id)
		st.SetText(":title", title)
		st.SetText(":body", body)
	})
}

// closeDoc closes the open version of doc at seq. A work item's open
// version, closed incrementally, leaves the head: its words and counts
// go, and its entry moves from p_search_head_fts to p_search_fts (a
// rebuild writes them from the rows, at its end). Any other close is one
// statement, as history's writes were before the head was kept.
func (p *search) closeDoc(conn *sqlite.Conn, doc string, seq int64) error {
	type closed struct {
		id          int64
		title, body string
	}
	var work []closed
	if !p.bulk && strings.HasPrefix(doc, "w\x00") {
		if err := query(conn, "search_open_text", func(st *sqlite.Stmt) { st.SetText(":doc", doc) }, func(st *sqlite.Stmt) error {
			work = append(work, closed{id: st.GetInt64("id"), title: st.GetText("title"), body: st.GetText("body")})
			return nil
		}); err != nil {
			return err
		}
	}
	if err := exec(conn, "search_close", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", seq)
		st.SetText(":doc", doc)
	}); err != nil {
		return err
	}
	for _, c := range work {
		if err := insertSearchFTS(conn, "search_head_fts_delete", c.id, c.title, c.body); err != nil {
			return err
		}
		if err := insertSearchFTS(conn, "search_fts_insert", c.id, c.title, c.body); err != nil {
			return err
		}
		if err := p.dropSearchTerms(conn, c.id); err != nil {
			return err
		}
	}
	return nil
}

// insertSearchRow writes one row of p_search with id (0: the next id).
func insertSearchRow(conn *sqlite.Conn, id int64, d *searchDoc, from, to int64) error {
	return exec(conn, "search_insert", func(st *sqlite.Stmt) {
		if id > 0 {
			st.SetInt64(":id", id)
		} else {
			st.SetNull(":id")
		}
		st.SetText(":doc", d.doc)
		st.SetText(":kind", d.kind)
		st.SetText(":ref", d.ref)
		st.SetText(":work", d.work)
		st.SetText(":session_id", d.session)
		st.SetText(":source", d.source)
		st.SetText(":state", d.state)
		st.SetInt64(":seq", d.seq)
		st.SetText(":title", d.title)
		st.SetText(":body", d.body)
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
	})
}

func loadSearchDoc(conn *sqlite.Conn, doc string, _ int64) (*searchDoc, error) {
	var out *searchDoc
	err := query(conn, "search_open_row", func(st *sqlite.Stmt) { st.SetText(":doc", doc) }, func(st *sqlite.Stmt) error {
		out = &searchDoc{doc: st.GetText("doc"), kind: st.GetText("kind"), ref: st.GetText("ref"), work: st.GetText("work"),
			session: st.GetText("session_id"), source: st.GetText("source"), state: st.GetText("state"), seq: st.GetInt64("seq"),
			title: st.GetText("title"), body: st.GetText("body")}
		return nil
	})
	return out, err
}

// set makes d the open version of its document unless the open version
// already says the same.
func (p *search) set(conn *sqlite.Conn, seq int64, d *searchDoc) error {
	cur, err := p.rows.get(conn, d.doc, seq)
	if err != nil {
		return err
	}
	if cur != nil && cur.kind == d.kind && cur.title == d.title && cur.body == d.body && cur.state == d.state && cur.session == d.session {
		return nil
	}
	return p.rows.put(conn, d.doc, seq, d)
}

func lines(parts ...string) string {
	var out []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

// Apply indexes the texts of source_indexed (work items),
// checkpoint_recorded (the checkpoint and the knowledge it changes) and
// execution_started events.
func (p *search) Apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	p.pending, p.pendingDF = p.pending[:0], nil
	if err := p.apply(conn, e, v); err != nil {
		return err
	}
	return p.flushTerms(conn)
}

func (p *search) apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	switch pl := v.(type) {
	case *events.SourceIndexed:
		return p.source(conn, e, pl)
	case *events.CheckpointRecorded:
		return p.checkpoint(conn, e, pl)
	case *events.ExecutionStarted:
		return p.set(conn, e.Seq, &searchDoc{doc: "x\x00" + pl.ExecutionID, kind: SearchExecution, ref: pl.ExecutionID, work: pl.Work,
			session: pl.SessionID, state: ExecStarted, seq: e.Seq, title: pl.Key, body: lines(pl.Purpose, strings.Join(pl.Argv, " "))})
	}
	return nil
}

func (p *search) source(conn *sqlite.Conn, e *events.Event, pl *events.SourceIndexed) error {
	if pl.Delta && !pl.Removed {
		return p.sourceDelta(conn, e, pl)
	}
	open, err := p.openBySource(conn, pl.Path)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	if !pl.Removed {
		for _, it := range pl.Items {
			doc := "w\x00" + pl.Path + "\x00" + it.Key
			if keep[doc] {
				continue // a key declared twice in one source: its first declaration
			}
			keep[doc] = true
			body := lines(append([]string{it.NextAction, it.Summary, it.Blocker}, it.Acceptance...)...)
			if err := p.set(conn, e.Seq, &searchDoc{doc: doc, kind: SearchWork, ref: it.Key, work: it.Key, source: pl.Path,
				state: it.Status, seq: e.Seq, title: it.Title, body: body}); err != nil {
				return err
			}
		}
	}
	for _, doc := range open {
		if !keep[doc] {
			if err := p.rows.drop(conn, doc, e.Seq); err != nil {
				return err
			}
		}
	}
	return nil
}

// sourceDelta indexes the first declarations of the work items a delta
// changes and drops those of the items it removes: the first declaration
// of a key is dropped only when the key is gone from the source.
func (p *search) sourceDelta(conn *sqlite.Conn, e *events.Event, pl *events.SourceIndexed) error {
	if pl.Dropped != nil {
		for _, ref := range pl.Dropped.Items {
			if ref.Repeat != 0 {
				continue
			}
			if err := p.rows.drop(conn, "w\x00"+pl.Path+"\x00"+ref.Key, e.Seq); err != nil {
				return err
			}
		}
	}
	for i, it := range pl.Items {
		if pl.ItemRepeat(i) != 0 {
			continue
		}
		body := lines(append([]string{it.NextAction, it.Summary, it.Blocker}, it.Acceptance...)...)
		if err := p.set(conn, e.Seq, &searchDoc{doc: "w\x00" + pl.Path + "\x00" + it.Key, kind: SearchWork, ref: it.Key, work: it.Key, source: pl.Path,
			state: it.Status, seq: e.Seq, title: it.Title, body: body}); err != nil {
			return err
		}
	}
	return nil
}

func (p *search) checkpoint(conn *sqlite.Conn, e *events.Event, pl *events.CheckpointRecorded) error {
	doc := &searchDoc{doc: "c\x00" + pl.CheckpointID, kind: SearchCheckpoint, ref: pl.CheckpointID, work: pl.Work,
		session: pl.SessionID, seq: e.Seq, title: pl.Digest, body: pl.NextAction}
	switch {
	case pl.CheckpointID != e.ID:
		p.namedOther = true
		if err := p.set(conn, e.Seq, doc); err != nil {
			return err
		}
	case p.bulk && !p.namedOther:
		// A rebuild that has met no checkpoint named otherwise: no
		// earlier version of this one can be open, nothing to close.
		if err := p.putDoc(conn, doc, e.Seq, 0); err != nil {
			return err
		}
	default:
		// A checkpoint named by its own event (as every command names
		// it) is a new document: there is no open version to compare
		// with, so it is not read back (a read per checkpoint, 6% of a
		// rebuild). put still closes an open version, which only a log
		// that named this id in an earlier checkpoint can hold.
		if err := p.rows.put(conn, doc.doc, e.Seq, doc); err != nil {
			return err
		}
	}
	// Loops a checkpoint recorded as bare texts (logs older than
	// knowledge ids) are found by their checkpoint.
	for i, text := range pl.OpenLoops {
		if err := p.set(conn, e.Seq, &searchDoc{doc: fmt.Sprintf("k\x00%s\x00%s#%d", pl.Work, pl.CheckpointID, i), kind: SearchLoop, work: pl.Work,
			session: pl.SessionID, state: KnowledgeOpen, seq: e.Seq, title: text}); err != nil {
			return err
		}
	}
	for _, c := range pl.Changes {
		doc := "k\x00" + pl.Work + "\x00" + c.ID
		if c.Op == events.ChangeOpen {
			state := KnowledgeActive
			if c.Kind == events.KnowledgeLoop {
				state = KnowledgeOpen
			}
			if err := p.set(conn, e.Seq, &searchDoc{doc: doc, kind: c.Kind, ref: c.ID, work: pl.Work, session: pl.SessionID,
				state: state, seq: e.Seq, title: c.Text}); err != nil {
				return err
			}
			continue
		}
		cur, err := p.rows.get(conn, doc, e.Seq)
		if err != nil {
			return err
		}
		if cur == nil {
			// Not indexed under its id (a loop opened by a bare text is
			// indexed under its checkpoint): the changes after it are
			// still this checkpoint's.
			continue
		}
		switch c.Op {
		case events.ChangeResolve:
			cur.state = KnowledgeResolved
		case events.ChangeDrop:
			cur.state = KnowledgeDropped
		case events.ChangeRetract:
			cur.state = KnowledgeRetracted
		case events.ChangeSupersede:
			cur.state = KnowledgeSuperseded
		case events.ChangeConfirm:
			cur.kind = events.KnowledgeFact
		}
		cur.body = lines(cur.body, c.Note)
		if err := p.set(conn, e.Seq, cur); err != nil {
			return err
		}
	}
	return nil
}

// SearchHit is one document a search found, as of the read's revision.
type SearchHit struct {
	Kind string `json:"kind"`
	// Ref is the document's id: the work item's key, the checkpoint's,
	// knowledge item's or execution's id ("" for a loop recorded as a bare
	// text, before loops had ids).
	Ref       string `json:"ref"`
	Work      string `json:"work,omitempty"`
	SessionID string `json:"session_id,omitempty"`
	State     string `json:"state,omitempty"`
	// Seq is the event that recorded the text found.
	Seq     int64  `json:"seq"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
	// Score is the relevance (higher is better; search_rank.go's rank,
	// or FTS5's bm25 for a prefix or a word beyond plain ASCII), relative
	// to this search only.
	Score float64 `json:"score"`
}

// FTSQuery turns words into the FTS5 query (for SearchAt) that matches
// the documents holding every word: each word quoted, so FTS5's operators
// are just words, a trailing * kept as a prefix search; "" when q holds no
// word.
func FTSQuery(q string) string {
	var terms []string
	for _, w := range strings.Fields(q) {
		prefix := strings.HasSuffix(w, "*")
		w = strings.Trim(strings.ReplaceAll(w, `"`, ""), "*")
		if w == "" {
			continue
		}
		t := `"` + w + `"`
		if prefix {
			t += "*"
		}
		terms = append(terms, t)
	}
	return strings.Join(terms, " ")
}

// SearchAt runs an FTS5 query (made by FTSQuery) over the documents
// visible at rev, best match first, at most limit, of one kind when kind
// is set. A query of plain words (ASCII letters and digits, no prefix)
// is ranked by search's rank (search_rank.go), every match scored; any
// other by FTS5's bm25 in the index that holds the version (the work
// items' open versions, or the rest). The title weighs twice the body.
func SearchAt(conn *sqlite.Conn, rev int64, q, kind string, limit int) ([]SearchHit, error) {
	terms := searchTerms(q)
	if terms == nil {
		return searchBM25(conn, rev, q, kind, limit)
	}
	hits, err := scoreMatches(conn, rev, q, terms, kind, false)
	if err != nil {
		return nil, err
	}
	if kind == "" || kind == SearchWork {
		work, err := scoreMatches(conn, rev, q, terms, kind, true)
		if err != nil {
			return nil, err
		}
		hits = append(hits, work...)
	}
	slices.SortFunc(hits, compareRanked)
	return searchPage(conn, q, hits[:min(limit, len(hits))])
}

// SearchHead is SearchAt at the head (rev, the read's revision): of a
// query of plain words, the work items' open versions are read best
// first from the rank kept ahead and the walk stops after about a page
// (searchHead), the other documents (history's) scored as SearchAt
// scores them; any other query is SearchAt's. A page then costs about
// what it returns and what history matches, however many work items
// hold the words.
func SearchHead(conn *sqlite.Conn, rev int64, q, kind string, limit int) ([]SearchHit, error) {
	terms := searchTerms(q)
	if terms == nil {
		return searchBM25(conn, rev, q, kind, limit)
	}
	var hits []rankedHit
	if kind == "" || kind == SearchWork {
		work, err := searchHead(conn, terms, limit)
		if err != nil {
			return nil, err
		}
		hits = work
	}
	if kind != SearchWork { // a work item's closed versions are not at the head
		rest, err := scoreMatches(conn, rev, q, terms, kind, false)
		if err != nil {
			return nil, err
		}
		hits = append(hits, rest...)
	}
	slices.SortFunc(hits, compareRanked)
	return searchPage(conn, q, hits[:min(limit, len(hits))])
}

// searchBM25 is SearchAt of a query FTS5 ranks: by its bm25 in each
// index, the two pages merged (the lower bm25, then the newer seq, then
// the doc key).
func searchBM25(conn *sqlite.Conn, rev int64, q, kind string, limit int) ([]SearchHit, error) {
	type bm25Hit struct {
		hit  SearchHit
		doc  string
		bm25 float64
	}
	var all []bm25Hit
	for _, name := range []string{"search_rest_match_at", "search_head_match_at"} {
		if name == "search_head_match_at" && kind != "" && kind != SearchWork {
			continue
		}
		err := query(conn, name, func(st *sqlite.Stmt) {
			st.SetText(":query", q)
			st.SetInt64(":rev", rev)
			st.SetText(":kind", kind)
			st.SetInt64(":limit", int64(limit))
		}, func(st *sqlite.Stmt) error {
			all = append(all, bm25Hit{doc: st.GetText("doc"), bm25: st.GetFloat("bm25"),
				hit: SearchHit{Kind: st.GetText("kind"), Ref: st.GetText("ref"), Work: st.GetText("work"), SessionID: st.GetText("session_id"),
					State: st.GetText("state"), Seq: st.GetInt64("seq"), Title: st.GetText("title"), Snippet: st.GetText("snippet"),
					Score: -st.GetFloat("bm25")}})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(all, func(a, b bm25Hit) int {
		return cmp.Or(cmp.Compare(a.bm25, b.bm25), cmp.Compare(b.hit.Seq, a.hit.Seq), cmp.Compare(a.doc, b.doc))
	})
	out := make([]SearchHit, 0, min(limit, len(all)))
	for _, h := range all[:min(limit, len(all))] {
		out = append(out, h.hit)
	}
	return out, nil
}
