package project

import (
	"sort"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// queueAtHead sets status's counts, queues and goals at the head from
// the work queues and counts the projections keep (projections.QueuePage,
// QueueCounts): the queues as the register files the items, then moved
// by what the reader's moment adds, the live claims (current) and the
// seats awaiting a person (waiting). It reads a page of each queue, the
// items of the claimed and held-back keys and a page of each goal's
// work, so its cost does not follow the register; it answers as queue
// does over the whole readiness list.
func (res *StatusResult) queueAtHead(r *events.Reader, live []projections.Claim, goals []events.Goal) error {
	counts, err := projections.QueueCounts(r.Conn)
	if err != nil {
		return err
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
	held, err := awaitingPerson(r, r.Head)
	if err != nil {
		return err
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
			return err
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
			return err
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
	res.ReadyCount = qs.ReadyTotal
	if len(goals) > 0 {
		if res.Goals, err = goalsAtHead(r.Conn, goals); err != nil {
			return err
		}
	}
	res.next()
	return nil
}

// queueItem is it as status lists it in queue: with its holder when
// claim holds it, with the reason it waits or is blocked.
func queueItem(it projections.WorkItem, claim *projections.Claim, queue, reason string) QueueItem {
	q := QueueItem{Key: it.Key, Title: it.Title, Status: it.Status}
	if claim != nil {
		q.Holder = &Holder{SessionID: claim.SessionID, Agent: claim.Agent, ExpiresAt: claim.ExpiresAt, FencingToken: claim.FencingToken}
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
