package projections

import (
	"cmp"
	"slices"
	"strings"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// The inspection reads (recovery inspect, session show, work show) list
// a work item's knowledge in force a page at a time: the open loops,
// then the decisions, the facts and the hypotheses, each by number, as
// one list (InForcePage). Packets never page it: a successor's packet
// names every loop in force.

// KnowledgePlace is an item's place in the order the knowledge in force
// is paged: its list (open loops, decisions, facts, hypotheses), then
// its number and id.
type KnowledgePlace struct {
	Kind string `json:"kind"`
	Num  int64  `json:"num"`
	ID   string `json:"id"`
}

// PlaceOfKnowledge is k's place in the paged order.
func PlaceOfKnowledge(k *Knowledge) KnowledgePlace {
	n, _ := knowledgeNum(k.ID)
	return KnowledgePlace{Kind: k.Kind, Num: n, ID: k.ID}
}

// KnownKind reports whether kind is one of the four kinds of knowledge.
func KnownKind(kind string) bool { return kindRank(kind) < 4 }

// kindRank is the place of kind's list in the paged order.
func kindRank(kind string) int {
	switch kind {
	case events.KnowledgeLoop:
		return 0
	case events.KnowledgeDecision:
		return 1
	case events.KnowledgeFact:
		return 2
	case events.KnowledgeHypothesis:
		return 3
	}
	return 4
}

// Compare orders two places as the pages list them.
func (p KnowledgePlace) Compare(o KnowledgePlace) int {
	return cmp.Or(cmp.Compare(kindRank(p.Kind), kindRank(o.Kind)), cmp.Compare(p.Num, o.Num), strings.Compare(p.ID, o.ID))
}

// InForcePage returns k with one page of its items in force: those after
// the place after (nil: from the first), in the paged order, at most
// limit of them (0 or less: every one), in their four lists; its closed
// items as k has them. total counts every item in force, and last is the
// place of the page's last item when more follow (the next page starts
// after it), nil when the page is the last. k nil gives nil.
func (k *KnowledgeState) InForcePage(after *KnowledgePlace, limit int) (page *KnowledgeState, total int, last *KnowledgePlace) {
	if k == nil {
		return nil, 0, nil
	}
	c := *k
	c.OpenLoops, c.Decisions, c.Facts, c.Hypotheses = []Knowledge{}, []Knowledge{}, []Knowledge{}, []Knowledge{}
	lists := []*[]Knowledge{&c.OpenLoops, &c.Decisions, &c.Facts, &c.Hypotheses}
	n := 0
	for i, items := range [][]Knowledge{k.OpenLoops, k.Decisions, k.Facts, k.Hypotheses} {
		total += len(items)
		for j := range items {
			pl := PlaceOfKnowledge(&items[j])
			if after != nil && pl.Compare(*after) <= 0 {
				continue
			}
			if limit > 0 && n == limit {
				if last == nil {
					last = new(PlaceOfKnowledge(lastOf(lists)))
				}
				continue
			}
			*lists[i] = append(*lists[i], items[j])
			n++
		}
	}
	return &c, total, last
}

// lastOf is the last item of the last non-empty list of lists.
func lastOf(lists []*[]Knowledge) *Knowledge {
	for i := len(lists) - 1; i >= 0; i-- {
		if l := *lists[i]; len(l) > 0 {
			return &l[len(l)-1]
		}
	}
	return nil
}

// InForce counts k's items in force: its open loops, decisions, facts
// and hypotheses (0 for k nil).
func (k *KnowledgeState) InForce() int {
	if k == nil {
		return 0
	}
	return len(k.OpenLoops) + len(k.Decisions) + len(k.Facts) + len(k.Hypotheses)
}

// KnowledgePageAt is KnowledgeStateAt(conn, work, rev, since), its
// closed items Listed(MaxClosedListed), cut to InForcePage(after, limit),
// read without loading every item in force: each list's page is read
// after the place in SQL (its LIMIT one more than is left, which says
// whether more follow), total counted with count(*) over the index of
// the items in force; head says rev is the log's head, where only the
// live items are read. The items closed after since are read as
// KnowledgeStateAt reads them.
func KnowledgePageAt(conn *sqlite.Conn, work string, rev, since int64, head bool, after *KnowledgePlace, limit int) (page *KnowledgeState, total int, last *KnowledgePlace, err error) {
	count, list, bind := "knowledge_inforce_count_at", "knowledge_inforce_page_at", keyAt(":work", work, rev)
	if head {
		count, list = "knowledge_inforce_count_head", "knowledge_inforce_page_head"
		bind = func(st *sqlite.Stmt) { st.SetText(":work", work) }
	}
	n, err := queryInt64(conn, count, "n", bind)
	if err != nil {
		return nil, 0, nil, err
	}
	var items []Knowledge
	for _, kind := range []string{events.KnowledgeLoop, events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis} {
		from := KnowledgePlace{Kind: kind}
		if after != nil {
			switch c := cmp.Compare(kindRank(kind), kindRank(after.Kind)); {
			case c < 0:
				continue // a list before the place
			case c == 0:
				from = *after
			}
		}
		left := int64(-1) // every one
		if limit > 0 {
			left = int64(limit + 1 - len(items))
		}
		err := query(conn, list, func(st *sqlite.Stmt) {
			bind(st)
			st.SetText(":kind", kind)
			st.SetInt64(":num", from.Num)
			st.SetText(":id", from.ID)
			st.SetInt64(":limit", left)
		}, func(st *sqlite.Stmt) error {
			items = append(items, *scanKnowledge(st))
			return nil
		})
		if err != nil {
			return nil, 0, nil, err
		}
		if limit > 0 && len(items) > limit {
			items = items[:limit]
			last = new(PlaceOfKnowledge(&items[limit-1]))
			break
		}
	}
	if since < rev {
		closed, err := closedBetween(conn, work, since, rev)
		if err != nil {
			return nil, 0, nil, err
		}
		slices.SortFunc(closed, byKindNum)
		items = append(items, closed...)
	}
	if err := countSessions(conn, work, rev, items); err != nil {
		return nil, 0, nil, err
	}
	return SortKnowledge(items, since).Listed(MaxClosedListed), int(n), last, nil
}
