package projections

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"zombiezen.com/go/sqlite"
)

// During a bulk rebuild or a bulk append (events.Store.WriteBulk) a
// projection holds its current rows in memory and writes only replaced
// versions, without secondary indexes, until EndBulk. Its tables are then
// incomplete, so the reads commands make at the head (SessionAt,
// SessionClaimsAt, LiveClaimAt, MaxFencingToken, WorkItemAt, ReadinessOf,
// BindingAt, ContextCompiledFor) are answered from memory on that
// connection, and any other read of its tables there fails instead of
// returning a partial answer. Reads on other connections are unaffected.

// bulkViews maps a connection to its projections in bulk mode.
var bulkViews sync.Map // *sqlite.Conn → *bulkView

// bulkView is the set of projections in bulk mode on one connection. Only
// the goroutine using that connection touches it.
type bulkView struct {
	sessions    *sessions
	claims      *claims
	checkpoints *checkpoints
	bindings    *bindings
	work        *work
	seats       *seats
}

func viewOf(conn *sqlite.Conn) *bulkView {
	v, ok := bulkViews.Load(conn)
	if !ok {
		return nil
	}
	return v.(*bulkView)
}

// enterBulk registers a projection's bulk mode on conn.
func enterBulk(conn *sqlite.Conn, set func(v *bulkView)) {
	v := viewOf(conn)
	if v == nil {
		v = &bulkView{}
		bulkViews.Store(conn, v)
	}
	set(v)
}

// leaveBulk unregisters a projection's bulk mode on conn.
func leaveBulk(conn *sqlite.Conn, clear func(v *bulkView)) {
	v := viewOf(conn)
	if v == nil {
		return
	}
	clear(v)
	if v.sessions == nil && v.claims == nil && v.checkpoints == nil && v.bindings == nil && v.work == nil && v.seats == nil {
		bulkViews.Delete(conn)
	}
}

// guard refuses a read of a projection's tables on a connection where that
// projection is in bulk mode (see above). Reads of the events table are
// allowed.
func (v *bulkView) guard(name string) error {
	if name == "checkpoint_by_id_at" {
		return nil
	}
	var held bool
	switch {
	case strings.HasPrefix(name, "session_"):
		held = v.sessions != nil
	case strings.HasPrefix(name, "claim_"):
		held = v.claims != nil
	case strings.HasPrefix(name, "checkpoint_"), strings.HasPrefix(name, "context_"):
		held = v.checkpoints != nil
	case strings.HasPrefix(name, "binding_"):
		held = v.bindings != nil
	case strings.HasPrefix(name, "source_"), strings.HasPrefix(name, "item_"), strings.HasPrefix(name, "goal_"), strings.HasPrefix(name, "rule_"):
		held = v.work != nil
	case name == "seat_at", name == "seat_list_at":
		// The seats' current versions are in memory; their session map and
		// logs are written as events come and stay readable.
		held = v.seats != nil
	}
	if held {
		return fmt.Errorf("%s: not readable while the projection is built in bulk", name)
	}
	return nil
}

// atHead checks that a read served from memory asks for the head the
// projection has reached.
func atHead(what string, rev, seq int64) error {
	if rev != seq {
		return fmt.Errorf("%s at %d: only the head (%d) is readable while the projection is built in bulk", what, rev, seq)
	}
	return nil
}

// bulkSession returns session id at the head from memory, enriched from
// the checkpoints projection (from memory too when it is in bulk mode).
func (v *bulkView) bulkSession(conn *sqlite.Conn, id string, rev int64) (*Session, error) {
	p := v.sessions
	if err := atHead("session", rev, p.seq); err != nil {
		return nil, err
	}
	cur, ok := p.rows.current[id]
	if !ok {
		return nil, nil
	}
	s := *cur
	s.Revision = p.rows.from[id]
	if v.checkpoints == nil {
		return &s, enrich(conn, &s, rev)
	}
	if c, ok := v.checkpoints.last[id]; ok {
		s.LastCheckpointSeq, s.LastCheckpointID = c.seq, c.id
	}
	s.LastContextHash = v.checkpoints.lastContext[id]
	return &s, nil
}

// bulkSessionClaims lists a session's claims at the head, newest token
// first.
func (p *claims) bulkSessionClaims(session string, rev int64) ([]Claim, error) {
	if err := atHead("claims of session", rev, p.seq); err != nil {
		return nil, err
	}
	var out []Claim
	for id := range p.bySession[session] {
		c := *p.rows.current[id]
		c.Revision = p.rows.from[id]
		out = append(out, c)
	}
	sortClaims(out)
	return out, nil
}

// bulkHeldByWork lists the held claims on work at the head, newest token
// first.
func (p *claims) bulkHeldByWork(work string, rev int64) ([]Claim, error) {
	if err := atHead("claims of work", rev, p.seq); err != nil {
		return nil, err
	}
	out := make([]Claim, 0, len(p.byWork[work]))
	for id, c := range p.byWork[work] {
		cp := *c
		cp.Revision = p.rows.from[id]
		out = append(out, cp)
	}
	sortClaims(out)
	return out, nil
}

// sortClaims orders claims by fencing token, highest first (ties, which
// one work item's tokens never have, by id).
func sortClaims(cs []Claim) {
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].FencingToken != cs[j].FencingToken {
			return cs[i].FencingToken > cs[j].FencingToken
		}
		return cs[i].ID < cs[j].ID
	})
}

// bulkItems returns the work items with key at the head, by source then
// ordinal.
func (p *work) bulkItems(key string, rev int64) ([]WorkItem, error) {
	if err := atHead("work item", rev, p.seq); err != nil {
		return nil, err
	}
	t := p.tables["item"]
	var els []*element
	for ek := range t.byKey[key] {
		els = append(els, t.rows.current[ek])
	}
	sort.Slice(els, func(i, j int) bool {
		if els[i].source != els[j].source {
			return els[i].source < els[j].source
		}
		return els[i].ordinal < els[j].ordinal
	})
	out := make([]WorkItem, 0, len(els))
	for _, el := range els {
		wi, ok := t.decoded[el]
		if !ok {
			if err := json.Unmarshal([]byte(el.json), &wi); err != nil {
				return nil, err
			}
			t.decoded[el] = wi
		}
		out = append(out, WorkItem{WorkItem: wi, SourcePath: el.source})
	}
	return out, nil
}
