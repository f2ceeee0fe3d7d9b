package projections

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Knowledge states. A loop is open until resolved or dropped; a decision,
// fact or hypothesis is active until retracted or superseded.
const (
	KnowledgeOpen       = "open"
	KnowledgeActive     = "active"
	KnowledgeResolved   = "resolved"
	KnowledgeDropped    = "dropped"
	KnowledgeRetracted  = "retracted"
	KnowledgeSuperseded = "superseded"
)

// Knowledge is the read model of one open loop, decision, fact or
// hypothesis of a work item. It belongs to the work item, not to a
// session: it lives across the sessions on the item until a checkpoint
// closes it.
type Knowledge struct {
	ID   string `json:"id"`
	Work string `json:"work"`
	Kind string `json:"kind"`
	Text string `json:"text"`
	// State is open or active while the item is in force.
	State string `json:"state"`
	// Note is the resolution or the reason it was closed.
	Note          string `json:"note,omitempty"`
	OpenedSeq     int64  `json:"opened_seq"`
	OpenedSession string `json:"opened_session"`
	OpenedAt      int64  `json:"opened_at"`
	ClosedSeq     int64  `json:"closed_seq,omitempty"`
	ClosedSession string `json:"closed_session,omitempty"`
	// ConfirmedSeq is the seq of the checkpoint that confirmed a
	// hypothesis, which made it a fact.
	ConfirmedSeq int64  `json:"confirmed_seq,omitempty"`
	Supersedes   string `json:"supersedes,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`
	// Sessions is how many sessions on the work item the item has been in
	// force during (the one that opened it included), as of the read.
	Sessions int `json:"sessions"`
	// Revision is the seq of the event that produced this version.
	Revision int64 `json:"revision"`
}

// Live reports whether the item is still in force (an open loop, or an
// active decision, fact or hypothesis).
func (k *Knowledge) Live() bool { return k.State == KnowledgeOpen || k.State == KnowledgeActive }

type knowledge struct {
	versioned[Knowledge]
	// In a bulk rebuild rows holds the current version of every item, and
	// these answer the two reads of the fold that would otherwise need the
	// table and its indexes: maxNum the highest number opened per work
	// item and id prefix (knowledgeNumKey), byWork the keys of each work
	// item's items. maxNum outlives a spill (it holds a number per work
	// item and prefix, not per item): the number index is built at the
	// rebuild's end.
	maxNum map[string]int64
	byWork map[string][]string
}

func newKnowledge() *knowledge {
	p := &knowledge{}
	p.base, p.step = base{name: "knowledge", version: 2, schema: "knowledge", tables: []Table{
		{Name: "p_knowledge", Key: []string{"work", "item_id"}, Temporal: true},
	}, fold: []string{"p_knowledge_key", "p_knowledge_open"}}, p.apply
	p.rows = versions[Knowledge]{insert: putKnowledge, load: loadKnowledge, close: closeKnowledge}
	// A bulk rebuild holds the current version of every item in memory; a
	// version is written when it is replaced, the current ones and the
	// indexes at EndBulk. maxNum outlives a spill.
	p.enter = func() { p.maxNum, p.byWork = map[string]int64{}, map[string][]string{} }
	p.leave = func() {
		if !p.rows.spilling {
			p.maxNum = nil
		}
		p.byWork = nil
	}
	return p
}

// knowledgeNumKey keys maxNum: a work item and the first letter of an id
// (what knowledge_max_num compares).
func knowledgeNumKey(work, prefix string) string { return work + "\x00" + prefix }

// currentOf lists, in a bulk rebuild, the current versions of work's
// items, as OpenKnowledge reads them from the table.
func (p *knowledge) currentOf(work string) []Knowledge {
	keys := p.byWork[work]
	out := make([]Knowledge, 0, len(keys))
	for _, k := range keys {
		out = append(out, *p.rows.current[k])
	}
	return out
}

// knowledgeKey is the key of work's item id in versions: the work key's
// length, a colon, the work key and the id, so it splits back into the two
// it was made of whatever they hold (a work key may hold a NUL or a colon).
func knowledgeKey(work, id string) string { return strconv.Itoa(len(work)) + ":" + work + id }

func splitKnowledgeKey(key string) (work, id string) {
	n, rest, _ := strings.Cut(key, ":")
	l, err := strconv.Atoi(n)
	if err != nil || l < 0 || l > len(rest) {
		panic(fmt.Sprintf("projections: malformed knowledge key %q", key))
	}
	return rest[:l], rest[l:]
}

func putKnowledge(conn *sqlite.Conn, k *Knowledge, from, to int64) error {
	num, err := knowledgeNum(k.ID)
	if err != nil {
		return err
	}
	return exec(conn, "knowledge_insert", func(st *sqlite.Stmt) {
		st.SetText(":work", k.Work)
		st.SetText(":item_id", k.ID)
		st.SetText(":kind", k.Kind)
		st.SetInt64(":num", num)
		st.SetText(":text", k.Text)
		st.SetText(":state", k.State)
		st.SetText(":note", k.Note)
		st.SetInt64(":opened_seq", k.OpenedSeq)
		st.SetText(":opened_session", k.OpenedSession)
		st.SetInt64(":opened_at", k.OpenedAt)
		st.SetInt64(":closed_seq", k.ClosedSeq)
		st.SetText(":closed_session", k.ClosedSession)
		st.SetInt64(":confirmed_seq", k.ConfirmedSeq)
		st.SetText(":supersedes", k.Supersedes)
		st.SetText(":superseded_by", k.SupersededBy)
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
	})
}

func loadKnowledge(conn *sqlite.Conn, key string, _ int64) (*Knowledge, error) {
	work, id := splitKnowledgeKey(key)
	return firstRow(queryRows(conn, "knowledge_open_row", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetText(":item_id", id)
	}, deref(scanKnowledge)))
}

func closeKnowledge(conn *sqlite.Conn, key string, seq int64) error {
	work, id := splitKnowledgeKey(key)
	return exec(conn, "knowledge_close", func(st *sqlite.Stmt) {
		st.SetInt64(":seq", seq)
		st.SetText(":work", work)
		st.SetText(":item_id", id)
	})
}

func scanKnowledge(st *sqlite.Stmt) *Knowledge {
	return &Knowledge{
		ID: st.GetText("item_id"), Work: st.GetText("work"), Kind: st.GetText("kind"), Text: st.GetText("text"),
		State: st.GetText("state"), Note: st.GetText("note"), OpenedSeq: st.GetInt64("opened_seq"),
		OpenedSession: st.GetText("opened_session"), OpenedAt: st.GetInt64("opened_at"),
		ClosedSeq: st.GetInt64("closed_seq"), ClosedSession: st.GetText("closed_session"),
		ConfirmedSeq: st.GetInt64("confirmed_seq"), Supersedes: st.GetText("supersedes"),
		SupersededBy: st.GetText("superseded_by"), Revision: st.GetInt64("valid_from"),
	}
}

// knowledgeNum is the number of an id such as L-12.
func knowledgeNum(id string) (int64, error) {
	_, n, ok := strings.Cut(id, "-")
	num, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || num < 1 {
		return 0, fmt.Errorf("knowledge id %q is not PREFIX-N", id)
	}
	return num, nil
}

// NormalizeText is a text as it is kept: surrounding space trimmed and
// inner runs of white space made one space. Knowledge texts are matched by
// MatchText, which folds more.
func NormalizeText(s string) string { return strings.Join(strings.Fields(s), " ") }

// MatchText is the one key loops, decisions, facts and hypotheses are
// matched by, wherever a text meets another (opening, closing, dedupe,
// hygiene, recovery verify): case folded, runs of white space made one
// space, and punctuation and space at either end dropped. Two items of one
// kind on one work item whose texts have the same key are the same item:
// "Fix the login." and "  fix the LOGIN " match; "fix the login" and "fix
// the logout" do not. A text that is only punctuation keeps it (folded),
// so it matches only itself.
//
// The legacy open_loops texts of old checkpoints (Apply) keep the
// white-space rule they were recorded under: the ids later events name
// were assigned by it, so a replay must not merge what it kept apart.
func MatchText(s string) string {
	s = strings.ToLower(NormalizeText(s))
	if k := strings.TrimFunc(s, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSpace(r) }); k != "" {
		return k
	}
	return s
}

// apply folds the knowledge changes of checkpoint_recorded events. A
// checkpoint's open_loops texts (the form logs written before knowledge
// ids used) open a loop unless an open loop of the work item has the same
// text; nothing closes by omission.
func (p *knowledge) apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	pl, ok := v.(*events.CheckpointRecorded)
	if !ok {
		return nil
	}
	if len(pl.OpenLoops) > 0 {
		var open []Knowledge
		var next int64
		var err error
		if p.rows.bulk {
			open = p.currentOf(pl.Work)
		} else if open, err = OpenKnowledge(conn, pl.Work); err != nil {
			return err
		}
		if p.maxNum != nil { // a rebuild, spilled or not
			next = p.maxNum[knowledgeNumKey(pl.Work, events.KnowledgePrefix(events.KnowledgeLoop))] + 1
		} else if next, err = nextKnowledgeNum(conn, "knowledge_max_num", pl.Work, events.KnowledgeLoop, e.Seq); err != nil {
			return err
		}
		have := map[string]bool{}
		for _, k := range open {
			if k.Kind == events.KnowledgeLoop {
				have[NormalizeText(k.Text)] = true
			}
		}
		for _, text := range pl.OpenLoops {
			if have[NormalizeText(text)] {
				continue
			}
			have[NormalizeText(text)] = true
			id := fmt.Sprintf("L-%d", next)
			next++
			if err := p.open(conn, e, pl, events.KnowledgeChange{Op: events.ChangeOpen, ID: id, Kind: events.KnowledgeLoop, Text: text}); err != nil {
				return err
			}
		}
	}
	for _, c := range pl.Changes {
		if err := p.change(conn, e, pl, c); err != nil {
			return err
		}
	}
	return nil
}

func (p *knowledge) open(conn *sqlite.Conn, e *events.Event, pl *events.CheckpointRecorded, c events.KnowledgeChange) error {
	num, err := knowledgeNum(c.ID)
	if err != nil {
		return err
	}
	state := KnowledgeActive
	if c.Kind == events.KnowledgeLoop {
		state = KnowledgeOpen
	}
	key := knowledgeKey(pl.Work, c.ID)
	if err := p.oneVersionPerSeq(key, pl.Work, c.ID, e.Seq); err != nil {
		return err
	}
	if p.maxNum != nil {
		nk := knowledgeNumKey(pl.Work, c.ID[:1])
		p.maxNum[nk] = max(p.maxNum[nk], num)
	}
	if p.rows.bulk {
		if _, ok := p.rows.current[key]; !ok {
			p.byWork[pl.Work] = append(p.byWork[pl.Work], key)
		}
	}
	return p.rows.put(conn, key, e.Seq, &Knowledge{
		ID: c.ID, Work: pl.Work, Kind: c.Kind, Text: c.Text, State: state, OpenedSeq: e.Seq,
		OpenedSession: pl.SessionID, OpenedAt: e.OccurredAt, Supersedes: c.Supersedes, Revision: e.Seq,
	})
}

func (p *knowledge) change(conn *sqlite.Conn, e *events.Event, pl *events.CheckpointRecorded, c events.KnowledgeChange) error {
	if c.Op == events.ChangeOpen {
		return p.open(conn, e, pl, c)
	}
	key := knowledgeKey(pl.Work, c.ID)
	cur, err := p.rows.get(conn, key, e.Seq)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("event %d: knowledge %s of %s: %s of an item never opened", e.Seq, c.ID, pl.Work, c.Op)
	}
	closeAs := func(state string) {
		cur.State, cur.Note, cur.ClosedSeq, cur.ClosedSession = state, c.Note, e.Seq, pl.SessionID
	}
	switch c.Op {
	case events.ChangeResolve:
		closeAs(KnowledgeResolved)
	case events.ChangeDrop:
		closeAs(KnowledgeDropped)
	case events.ChangeRetract:
		closeAs(KnowledgeRetracted)
	case events.ChangeSupersede:
		closeAs(KnowledgeSuperseded)
		cur.SupersededBy = c.By
	case events.ChangeConfirm:
		cur.Kind, cur.ConfirmedSeq = events.KnowledgeFact, e.Seq
	default:
		return fmt.Errorf("event %d: knowledge %s: unknown change %q", e.Seq, c.ID, c.Op)
	}
	cur.Revision = e.Seq
	if err := p.oneVersionPerSeq(key, pl.Work, c.ID, e.Seq); err != nil {
		return err
	}
	return p.rows.put(conn, key, e.Seq, cur)
}

// oneVersionPerSeq refuses, in a bulk rebuild, a second version of an item
// at one seq, with the seq named as the incremental path's insert fails
// (p_knowledge_key is unique on work, item_id and valid_from): in bulk mode
// the index is built only at the end, where the seq is no longer known.
func (p *knowledge) oneVersionPerSeq(key, work, id string, seq int64) error {
	if !p.rows.bulk {
		return nil
	}
	if from, ok := p.rows.from[key]; ok && from == seq {
		return fmt.Errorf("knowledge %s of %q: a second version at seq %d: UNIQUE constraint failed: p_knowledge.work, p_knowledge.item_id, p_knowledge.valid_from", id, work, seq)
	}
	return nil
}

// OpenKnowledge lists the current versions of a work item's knowledge
// items, live or closed, at the head (for writers inside a transaction).
func OpenKnowledge(conn *sqlite.Conn, work string) ([]Knowledge, error) {
	return queryRows(conn, "knowledge_open_by_work", func(st *sqlite.Stmt) { st.SetText(":work", work) }, deref(scanKnowledge))
}

// NextKnowledgeNum returns the number the next item of kind on work gets
// (one more than the highest used by rev), reading one row of the number
// index.
func NextKnowledgeNum(conn *sqlite.Conn, work, kind string, rev int64) (int64, error) {
	return nextKnowledgeNum(conn, "knowledge_next_num", work, kind, rev)
}

// nextKnowledgeNum runs statement, knowledge_next_num or, in the fold,
// where a bulk rebuild has not built the number index yet,
// knowledge_max_num.
func nextKnowledgeNum(conn *sqlite.Conn, statement, work, kind string, rev int64) (int64, error) {
	n, err := queryInt64(conn, statement, "num", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetText(":prefix", events.KnowledgePrefix(kind))
		st.SetInt64(":rev", rev)
	})
	return n + 1, err
}

// KnowledgeAt lists a work item's knowledge items as of rev (live and
// closed), by kind and number, with Sessions counted from the sessions on
// the item at rev.
func KnowledgeAt(conn *sqlite.Conn, work string, rev int64) ([]Knowledge, error) {
	out, err := queryRows(conn, "knowledge_by_work_at", keyAt(":work", work, rev), deref(scanKnowledge))
	if err != nil || len(out) == 0 {
		return out, err
	}
	if err := countSessions(conn, work, rev, out); err != nil {
		return nil, err
	}
	return out, nil
}

// countSessions sets each item's Sessions as of rev: the sessions of
// work alive at some point while it was in force, that is those started
// by the seq it closed at (or by rev), less those that ended before the
// seq that opened it (which all started before it). Both counts are
// ordinals the sessions projection keeps in the log's order, read with
// one index seek each, so the cost follows the items, not the work
// item's history of sessions; items sharing a bound share the seek.
func countSessions(conn *sqlite.Conn, work string, rev int64, items []Knowledge) error {
	started, ended := map[int64]int64{}, map[int64]int64{}
	count := func(memo map[int64]int64, stmt, param string, seq int64) (int64, error) {
		if n, ok := memo[seq]; ok {
			return n, nil
		}
		n, err := sessionOrdinal(conn, stmt, param, work, seq)
		memo[seq] = n
		return n, err
	}
	for i := range items {
		k := &items[i]
		until := rev
		if k.ClosedSeq > 0 {
			until = k.ClosedSeq
		}
		s, err := count(started, "session_started_by_work", ":until", until)
		if err != nil {
			return err
		}
		e, err := count(ended, "session_ended_by_work", ":before", k.OpenedSeq)
		if err != nil {
			return err
		}
		k.Sessions = int(s - e)
	}
	return nil
}

// KnowledgeState is a work item's knowledge at a revision as reads and
// packets show it: what is in force, and what closed since a checkpoint
// (shown once, with its resolution or reason).
type KnowledgeState struct {
	OpenLoops  []Knowledge `json:"open_loops"`
	Decisions  []Knowledge `json:"decisions"`
	Facts      []Knowledge `json:"facts"`
	Hypotheses []Knowledge `json:"hypotheses"`
	// Closed lists the items closed after the Since seq: resolved and
	// dropped loops, retracted and superseded items.
	Closed []Knowledge `json:"closed_since_checkpoint"`
	// Since is the seq after which closed items are listed.
	Since int64 `json:"closed_since_seq"`
	// ClosedMore counts the items closed after Since that Closed leaves
	// out (Listed); absent when Closed lists them all.
	ClosedMore int `json:"closed_since_more,omitempty"`
}

// MaxClosedListed bounds the items a read lists as closed since a
// checkpoint (Listed): a session resumed long after its checkpoint, on a
// work item others went on with, would otherwise carry every close since.
const MaxClosedListed = 50

// Listed returns k with at most n of its closed items, those that closed
// last (LatestClosed), and ClosedMore counting the others; k itself when
// it lists n or fewer.
func (k *KnowledgeState) Listed(n int) *KnowledgeState {
	if k == nil || len(k.Closed) <= n {
		return k
	}
	c := *k
	c.Closed = LatestClosed(k.Closed, n)
	c.ClosedMore = k.ClosedMore + len(k.Closed) - len(c.Closed)
	return &c
}

// LatestClosed returns the n items of closed that closed last, in
// closed's order (of those closed at the earliest seq kept, the first in
// that order while there is room); closed itself when it holds n or
// fewer.
func LatestClosed(closed []Knowledge, n int) []Knowledge {
	if len(closed) <= n {
		return closed
	}
	seqs := make([]int64, len(closed))
	for i := range closed {
		seqs[i] = closed[i].ClosedSeq
	}
	slices.Sort(seqs)
	cut := seqs[len(seqs)-n] // the earliest close kept
	// Every item closed after cut, then those closed at cut (one
	// checkpoint may close several) while there is room.
	room := n
	for _, q := range seqs {
		if q > cut {
			room--
		}
	}
	var kept []Knowledge
	for _, c := range closed {
		if c.ClosedSeq > cut || c.ClosedSeq == cut && room > 0 {
			if c.ClosedSeq == cut {
				room--
			}
			kept = append(kept, c)
		}
	}
	return kept
}

// closedBetween lists work's items closed in (since, rev].
func closedBetween(conn *sqlite.Conn, work string, since, rev int64) ([]Knowledge, error) {
	var closed []Knowledge
	err := query(conn, "knowledge_closed_between", func(st *sqlite.Stmt) {
		st.SetText(":work", work)
		st.SetInt64(":since", since)
		st.SetInt64(":rev", rev)
	}, func(st *sqlite.Stmt) error {
		closed = append(closed, *scanKnowledge(st))
		return nil
	})
	return closed, err
}

// KnowledgeStateAt returns work's knowledge at rev, with the items closed
// after since. It reads the items in force at rev and those closed in
// (since, rev], never the items closed before since, so its cost follows
// what is in force, not the item's whole history: the result equals
// SortKnowledge(KnowledgeAt(conn, work, rev), since).
func KnowledgeStateAt(conn *sqlite.Conn, work string, rev, since int64) (*KnowledgeState, error) {
	items, err := LiveKnowledgeAt(conn, work, rev)
	if err != nil {
		return nil, err
	}
	if since < rev {
		closed, err := closedBetween(conn, work, since, rev)
		if err != nil {
			return nil, err
		}
		items = append(items, closed...)
		slices.SortFunc(items, byKindNum)
	}
	if err := countSessions(conn, work, rev, items); err != nil {
		return nil, err
	}
	return SortKnowledge(items, since), nil
}

// LiveKnowledgeAt lists the items of work in force at rev (open loops,
// active decisions, facts and hypotheses), by kind and number, without
// Sessions. At the head it reads only the live items; at an earlier rev
// also the versions that ended after rev.
func LiveKnowledgeAt(conn *sqlite.Conn, work string, rev int64) ([]Knowledge, error) {
	out, err := queryRows(conn, "knowledge_live_at", keyAt(":work", work, rev), deref(scanKnowledge))
	slices.SortFunc(out, byKindNum)
	return out, err
}

// KnowledgeItem returns the current version of work's item id, live or
// closed, or nil when work never had it.
func KnowledgeItem(conn *sqlite.Conn, work, id string) (*Knowledge, error) {
	return loadKnowledge(conn, knowledgeKey(work, id), 0)
}

// byKindNum orders knowledge items as the reads list them: by kind, then
// number.
func byKindNum(a, b Knowledge) int {
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	an, _ := knowledgeNum(a.ID)
	bn, _ := knowledgeNum(b.ID)
	if c := cmp.Compare(an, bn); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

// SortKnowledge files items into a KnowledgeState.
func SortKnowledge(all []Knowledge, since int64) *KnowledgeState {
	st := &KnowledgeState{OpenLoops: []Knowledge{}, Decisions: []Knowledge{}, Facts: []Knowledge{}, Hypotheses: []Knowledge{}, Closed: []Knowledge{}, Since: since}
	for _, k := range all {
		if !k.Live() {
			if k.ClosedSeq > since {
				st.Closed = append(st.Closed, k)
			}
			continue
		}
		switch k.Kind {
		case events.KnowledgeLoop:
			st.OpenLoops = append(st.OpenLoops, k)
		case events.KnowledgeDecision:
			st.Decisions = append(st.Decisions, k)
		case events.KnowledgeFact:
			st.Facts = append(st.Facts, k)
		case events.KnowledgeHypothesis:
			st.Hypotheses = append(st.Hypotheses, k)
		}
	}
	return st
}

// AllKnowledgeWorkAt lists the work items that have knowledge items at
// rev.
func AllKnowledgeWorkAt(conn *sqlite.Conn, rev int64) ([]string, error) {
	return queryRows(conn, "knowledge_works_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) }, always(func(st *sqlite.Stmt) string { return st.GetText("work") }))
}
