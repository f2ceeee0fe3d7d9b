// Package workqueue files a project's work items in the queues a reader
// sees at a revision, as awr status lists them: current (claimed or in
// progress), ready, waiting (on a dependency, or on a person: a seat's
// attention nobody answered holds its work back, HoldBack) and blocked,
// each a page with its total. At the head it reads the queues the
// projections keep and moves only what the reader's moment changes (the
// live claims, the seats awaiting a person: AtHead), so its cost does
// not follow the register; at a past revision it files every item's
// readiness (Of), and both answer alike. The door (internal/project)
// assembles status and ready from it.
package workqueue

import (
	"fmt"
	"sort"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// Queues are the work items by what they wait for: each list holds the
// first commands.DefaultPage of its queue, in ready's order (priority,
// then key), and its *_total counts the whole queue (`awr ready` pages
// through the ready ones, `awr ready --all` lists every item).
type Queues struct {
	Current      []QueueItem `json:"current"`
	Ready        []QueueItem `json:"ready"`
	Waiting      []QueueItem `json:"waiting"`
	Blocked      []QueueItem `json:"blocked"`
	CurrentTotal int         `json:"current_total"`
	ReadyTotal   int         `json:"ready_total"`
	WaitingTotal int         `json:"waiting_total"`
	BlockedTotal int         `json:"blocked_total"`
}

// QueueItem is one work item in a queue; Holder is set for claimed work.
type QueueItem struct {
	Key    string  `json:"key"`
	Title  string  `json:"title"`
	Status string  `json:"status"`
	Holder *Holder `json:"holder,omitempty"`
	Reason string  `json:"reason,omitempty"`
}

// Holder is the session holding a live claim on an item.
type Holder struct {
	SessionID    string `json:"session_id"`
	Agent        string `json:"agent"`
	ExpiresAt    int64  `json:"expires_at,omitempty"`
	FencingToken int64  `json:"fencing_token"`
}

// HolderOf is the holder of claim c.
func HolderOf(c *projections.Claim) *Holder {
	return &Holder{SessionID: c.SessionID, Agent: c.Agent, ExpiresAt: c.ExpiresAt, FencingToken: c.FencingToken}
}

// View is the work items as awr status files them: how many there are,
// how many of each status, the queues, and the goals with their work.
type View struct {
	WorkItems int
	Counts    map[string]int
	Queues    Queues
	Goals     []intake.GoalView
}

// Of counts the items of ready (every item's readiness, read whole) by
// status, files them in the queues (current, ready, waiting and
// blocked) and links goals to the work that serves them
// (intake.LinkGoals): awr status at a past revision. AtHead answers the
// same at the head without reading every item.
func Of(ready []projections.Readiness, goals []events.Goal) *View {
	v := &View{WorkItems: len(ready), Counts: map[string]int{}}
	if len(goals) > 0 {
		v.Goals = intake.LinkGoals(goals, ready)
	}
	counts, qs := v.Counts, &v.Queues
	*qs = Queues{Current: []QueueItem{}, Ready: []QueueItem{}, Waiting: []QueueItem{}, Blocked: []QueueItem{}}
	for _, it := range ready {
		counts[it.Item.Status]++
		q := QueueItem{Key: it.Item.Key, Title: it.Item.Title, Status: it.Item.Status}
		if it.Claim != nil {
			q.Holder = HolderOf(it.Claim)
		}
		switch {
		case it.Ready:
			qs.add(projections.QueueReady, q)
		case it.Claim != nil || it.Item.Status == projections.StatusInProgress:
			qs.add(projections.QueueCurrent, q)
		case it.Item.Status == projections.StatusCompleted || it.Item.Status == projections.StatusCancelled:
		case it.Item.Status == projections.StatusBlocked || hasReason(it, projections.ReasonBlocker):
			q.Reason = firstReason(it)
			qs.add(projections.QueueBlocked, q)
		case hasReason(it, projections.ReasonDependencyOpen, projections.ReasonDependencyMissing, projections.ReasonDependencyCycle, ReasonAwaitingPerson):
			q.Reason = firstReason(it)
			qs.add(projections.QueueWaiting, q)
		}
	}
	return v
}

// AtHead is what Of answers (and the goals' work, as intake.LinkGoals
// links it) at the head, read from the work queues and counts the
// projections keep (projections.QueuePage,
// QueueCounts): the queues as the register files the items, then moved
// by what the reader's moment adds, the live claims (current) and the
// seats awaiting a person (waiting). It reads a page of each queue, the
// items of the claimed and held-back keys and a page of each goal's
// work, so its cost does not follow the register; it answers as Of does
// over the whole readiness list.
func AtHead(r *events.Reader, live []projections.Claim, goals []events.Goal) (*View, error) {
	res := &View{}
	counts, err := projections.QueueCounts(r.Conn)
	if err != nil {
		return nil, err
	}
	res.WorkItems = counts["items"]
	res.Counts = map[string]int{}
	for name, n := range counts {
		if st, ok := strings.CutPrefix(name, "status:"); ok {
			res.Counts[st] = n
		}
	}
	qs := &res.Queues
	*qs = Queues{Current: []QueueItem{}, Ready: []QueueItem{}, Waiting: []QueueItem{}, Blocked: []QueueItem{}}
	listed := []string{projections.QueueCurrent, projections.QueueReady, projections.QueueWaiting, projections.QueueBlocked}
	for _, q := range listed {
		_, total := qs.of(q)
		*total = counts["queue:"+q]
	}
	claims := map[string]*projections.Claim{}
	for i := range live {
		if _, ok := claims[live[i].Work]; !ok {
			claims[live[i].Work] = &live[i] // newest token first per item
		}
	}
	held, err := AwaitingPerson(r, r.Head)
	if err != nil {
		return nil, err
	}
	taken := map[string]bool{}
	for k := range claims {
		taken[k] = true
	}
	for k := range held {
		taken[k] = true
	}
	// The items of the taken keys, each in the queue the moment puts it.
	type placed struct {
		place projections.Place
		queue string
		item  QueueItem
	}
	var moved []placed
	for k := range taken {
		items, err := projections.QueuedByKey(r.Conn, k)
		if err != nil {
			return nil, err
		}
		for _, q := range items {
			queue, reason := q.Queue, q.Reason
			switch {
			case claims[k] != nil:
				queue = projections.QueueCurrent
			case q.Queue == projections.QueueReady:
				queue, reason = projections.QueueWaiting, held[k][0].Message
			case q.Queue == projections.QueueOther:
				queue = projections.QueueWaiting
			}
			if _, total := qs.of(q.Queue); total != nil {
				*total--
			}
			if _, total := qs.of(queue); total != nil {
				*total++
			}
			moved = append(moved, placed{place: q.Place(), queue: queue, item: queueItem(q.Item, claims[k], queue, reason)})
		}
	}
	for _, queue := range listed {
		var page []placed
		if err := projections.QueuePage(r.Conn, queue, nil, func(q projections.Queued) (bool, error) {
			if !taken[q.Item.Key] {
				page = append(page, placed{place: q.Place(), queue: queue, item: queueItem(q.Item, nil, queue, q.Reason)})
			}
			return len(page) < commands.DefaultPage, nil
		}); err != nil {
			return nil, err
		}
		for _, m := range moved {
			if m.queue == queue {
				page = append(page, m)
			}
		}
		sort.Slice(page, func(i, j int) bool { return page[i].place.Compare(page[j].place) < 0 })
		list, _ := qs.of(queue)
		for _, p := range page {
			if len(*list) == commands.DefaultPage {
				break
			}
			*list = append(*list, p.item)
		}
	}
	if len(goals) > 0 {
		if res.Goals, err = goalsAtHead(r.Conn, goals); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// queueItem is it as status lists it in queue: with its holder when
// claim holds it, with the reason it waits or is blocked.
func queueItem(it projections.WorkItem, claim *projections.Claim, queue, reason string) QueueItem {
	q := QueueItem{Key: it.Key, Title: it.Title, Status: it.Status}
	if claim != nil {
		q.Holder = HolderOf(claim)
	}
	if queue == projections.QueueWaiting || queue == projections.QueueBlocked {
		q.Reason = reason
	}
	return q
}

// goalsAtHead is intake.LinkGoals at the head from the work queues: each
// goal with a page of the work that serves it, and how much there is.
func goalsAtHead(conn *sqlite.Conn, goals []events.Goal) ([]intake.GoalView, error) {
	out := make([]intake.GoalView, 0, len(goals))
	for _, g := range goals {
		keys, total, err := projections.GoalWork(conn, g.Key, commands.DefaultPage)
		if err != nil {
			return nil, err
		}
		out = append(out, intake.GoalView{Goal: g, Work: keys, WorkTotal: total})
	}
	return out, nil
}

// add files q in queue (projections.QueueReady, ...): counted, and
// listed while the list holds less than a page.
func (qs *Queues) add(queue string, q QueueItem) {
	list, total := qs.of(queue)
	if list == nil {
		return
	}
	*total++
	if len(*list) < commands.DefaultPage {
		*list = append(*list, q)
	}
}

// of returns the list and the total of queue (nil for a queue status
// does not list: closed, other).
func (qs *Queues) of(queue string) (*[]QueueItem, *int) {
	switch queue {
	case projections.QueueCurrent:
		return &qs.Current, &qs.CurrentTotal
	case projections.QueueReady:
		return &qs.Ready, &qs.ReadyTotal
	case projections.QueueWaiting:
		return &qs.Waiting, &qs.WaitingTotal
	case projections.QueueBlocked:
		return &qs.Blocked, &qs.BlockedTotal
	}
	return nil, nil
}

func hasReason(r projections.Readiness, codes ...string) bool {
	for _, x := range r.Reasons {
		for _, c := range codes {
			if x.Code == c {
				return true
			}
		}
	}
	return false
}

func firstReason(r projections.Readiness) string {
	if len(r.Reasons) == 0 {
		return ""
	}
	return r.Reasons[0].Message
}

// ReasonAwaitingPerson is the reason added to projections' own
// (projections.Readiness) for work nobody holds that waits on a person: a
// seat working on it awaits a person's answer (an attention_required
// until awr seat clear-attention).
const ReasonAwaitingPerson = "awaiting_person"

// HoldBack marks not ready, with a reason, the items of rs that
// projections judged ready but that wait on a person: a seat's work whose
// attention nobody answered. Status and ready both go by it, so their
// counts agree.
func HoldBack(r *events.Reader, rev int64, rs []projections.Readiness) error {
	byWork, err := AwaitingPerson(r, rev)
	if err != nil || len(byWork) == 0 {
		return err
	}
	for i := range rs {
		if why := byWork[rs[i].Item.Key]; len(why) > 0 {
			rs[i].Reasons = append(rs[i].Reasons, why...)
			rs[i].Ready = false
		}
	}
	return nil
}

// AwaitingPerson returns, by work key, the reasons a seat holds work back
// as of rev: a seat working on it awaits a person's answer.
func AwaitingPerson(r *events.Reader, rev int64) (map[string][]projections.NotReadyReason, error) {
	byWork := map[string][]projections.NotReadyReason{}
	seats, err := projections.SeatsAt(r.Conn, "", rev)
	if err != nil {
		return nil, err
	}
	for _, s := range seats {
		if s.AttentionSeq != 0 && s.Work != "" {
			byWork[s.Work] = append(byWork[s.Work], projections.NotReadyReason{Code: ReasonAwaitingPerson, Key: s.Address,
				Message: fmt.Sprintf("seat %s awaits a person (attention_required at seq %d): awr seat clear-attention %s --reason 'WHAT YOU CHECKED'", s.Address, s.AttentionSeq, s.Address)})
		}
	}
	return byWork, nil
}

// ReadyPage is one page of the ready queue at the head (awr ready): its
// items in ready's order, the totals of ready and of executable
// (organized) items, and, when more items follow, the place of the last
// one listed, from which the next page starts.
type ReadyPage struct {
	Items           []projections.WorkItem
	ReadyTotal      int
	ExecutableTotal int
	Next            *projections.Place
}

// ReadyAtHead is a page of at most limit ready items (0: all; only the
// executable ones with executable) after the place after (nil: from the
// first), read from the work queues the projections keep: the ready
// queue in order, less the items a live claim holds (live: the claims
// live at the reader's now, projections.LiveClaimsAt at the head) or a
// seat holds back (AwaitingPerson), and the totals, the queue's counts
// less those items. Its cost follows the page, the live claims and the
// seats awaiting a person, not the register; its answer depends on the
// head and live only.
func ReadyAtHead(r *events.Reader, live []projections.Claim, executable bool, after *projections.Place, limit int) (*ReadyPage, error) {
	res := &ReadyPage{}
	held, err := AwaitingPerson(r, r.Head)
	if err != nil {
		return nil, err
	}
	taken := map[string]bool{}
	for _, c := range live {
		taken[c.Work] = true
	}
	for k := range held {
		taken[k] = true
	}
	counts, err := projections.QueueCounts(r.Conn)
	if err != nil {
		return nil, err
	}
	ready, organized := counts["queue:"+projections.QueueReady], counts["organized:"+projections.QueueReady]
	for k := range taken {
		qs, err := projections.QueuedByKey(r.Conn, k)
		if err != nil {
			return nil, err
		}
		for _, q := range qs {
			if q.Queue == projections.QueueReady {
				ready--
				if q.Organized {
					organized--
				}
			}
		}
	}
	res.ReadyTotal, res.ExecutableTotal = ready, organized
	if executable {
		res.ReadyTotal = organized
	}
	var last projections.Place
	err = projections.QueuePage(r.Conn, projections.QueueReady, after, func(q projections.Queued) (bool, error) {
		if taken[q.Item.Key] || (executable && !q.Organized) {
			return true, nil
		}
		if limit > 0 && len(res.Items) == limit {
			next := last
			res.Next = &next
			return false, nil
		}
		res.Items = append(res.Items, q.Item)
		last = q.Place()
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
