package projections

import (
	"cmp"
	"strings"

	"github.com/awr-dev/awr/events"
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
