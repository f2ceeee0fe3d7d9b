package projections

import (
	"cmp"
	"sort"
	"strings"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// The queues a work item's readiness files it in, before the claims and
// the seats of the reader's moment are counted: ready to claim, current
// (in progress), waiting (on a dependency), blocked, closed (completed
// or cancelled), or other (not ready for another reason: its status, a
// duplicate key).
const (
	QueueReady   = "ready"
	QueueCurrent = "current"
	QueueWaiting = "waiting"
	QueueBlocked = "blocked"
	QueueClosed  = "closed"
	QueueOther   = "other"
)

// QueueOf files an item evaluated with no claim in its queue, with the
// first reason it is not ready ("" when ready).
func QueueOf(r Readiness) (queue, reason string) {
	if len(r.Reasons) > 0 {
		reason = r.Reasons[0].Message
	}
	has := func(codes ...string) bool {
		for _, x := range r.Reasons {
			for _, c := range codes {
				if x.Code == c {
					return true
				}
			}
		}
		return false
	}
	switch st := r.Item.Status; {
	case r.Ready:
		return QueueReady, ""
	case st == StatusInProgress:
		return QueueCurrent, reason
	case st == StatusCompleted || st == StatusCancelled:
		return QueueClosed, reason
	case st == StatusBlocked || has(ReasonBlocker):
		return QueueBlocked, reason
	case has(ReasonDependencyOpen, ReasonDependencyMissing, ReasonDependencyCycle):
		return QueueWaiting, reason
	}
	return QueueOther, reason
}

// Organized reports whether an agent can start on it as it is organized:
// a goal that goals declares, acceptance criteria and a next action (the
// rule of intake.Unexecutable, which says what is missing).
func Organized(it WorkItem, goals map[string]bool) bool {
	return it.Goal != "" && goals[it.Goal] && len(it.Acceptance) > 0 && strings.TrimSpace(it.NextAction) != ""
}

// Place is a work item's position in the order ready lists work:
// priority rank, key, source, then declaration.
type Place struct {
	Rank    int    `json:"r"`
	Key     string `json:"k"`
	Source  string `json:"s"`
	Ordinal int    `json:"o"`
}

// Compare orders two places as ready lists them.
func (p Place) Compare(o Place) int {
	return cmp.Or(cmp.Compare(p.Rank, o.Rank), strings.Compare(p.Key, o.Key), strings.Compare(p.Source, o.Source), cmp.Compare(p.Ordinal, o.Ordinal))
}

// PlaceOf is it's place in ready's order.
func PlaceOf(it WorkItem) Place {
	return Place{Rank: PriorityRank(it.Priority), Key: it.Key, Source: it.SourcePath, Ordinal: it.Ordinal}
}

// Queued is one current work item as the head's work queues hold it.
type Queued struct {
	Item      WorkItem
	Queue     string
	Reason    string
	Organized bool
}

// Place is q's place in ready's order.
func (q Queued) Place() Place { return PlaceOf(q.Item) }

// queueRow is one row of p_work_queue.
type queueRow struct {
	rank      int
	queue     string
	reason    string
	organized bool
	goal      string
}

type queueKey struct {
	key, source string
	ordinal     int
}

// placeWork makes the head's work queues (p_work_queue) and counts
// (p_work_counts) those of the current work items and goals: the items
// are evaluated whole, as ReadinessAt does with no claim, and only the
// rows that changed are written. Its cost follows the register, not the
// log: it runs once per index of a source.
func placeWork(conn *sqlite.Conn) error {
	items, err := scanItems(conn, "item_list_current", 256, func(*sqlite.Stmt) {})
	if err != nil {
		return err
	}
	items = mergeSources(items)
	goals := map[string]bool{}
	if err := query(conn, "goal_current_keys", func(*sqlite.Stmt) {}, func(st *sqlite.Stmt) error {
		goals[st.GetText("key")] = true
		return nil
	}); err != nil {
		return err
	}
	want := make(map[queueKey]queueRow, len(items))
	counts := map[string]int{"items": len(items)}
	for _, r := range Evaluate(items, nil) {
		q, reason := QueueOf(r)
		row := queueRow{rank: PriorityRank(r.Item.Priority), queue: q, reason: reason, organized: Organized(r.Item, goals), goal: r.Item.Goal}
		want[queueKey{r.Item.Key, r.Item.SourcePath, r.Item.Ordinal}] = row
		counts["status:"+r.Item.Status]++
		counts["queue:"+q]++
		if row.organized {
			counts["organized:"+q]++
		}
		if row.goal != "" {
			counts["goal:"+row.goal]++
		}
	}
	have := map[queueKey]queueRow{}
	if err := query(conn, "queue_all", func(*sqlite.Stmt) {}, func(st *sqlite.Stmt) error {
		have[queueKey{st.GetText("key"), st.GetText("source_path"), int(st.GetInt64("ordinal"))}] = queueRow{
			rank: int(st.GetInt64("rank")), queue: st.GetText("queue"), reason: st.GetText("reason"),
			organized: st.GetInt64("organized") != 0, goal: st.GetText("goal")}
		return nil
	}); err != nil {
		return err
	}
	keys := make([]queueKey, 0, len(have)+len(want))
	for k := range have {
		keys = append(keys, k)
	}
	for k := range want {
		if _, ok := have[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		return cmp.Or(strings.Compare(keys[i].key, keys[j].key), strings.Compare(keys[i].source, keys[j].source), cmp.Compare(keys[i].ordinal, keys[j].ordinal)) < 0
	})
	for _, k := range keys {
		old, had := have[k]
		row, keep := want[k]
		if had && keep && old == row {
			continue
		}
		bind := func(st *sqlite.Stmt) {
			st.SetText(":key", k.key)
			st.SetText(":source_path", k.source)
			st.SetInt64(":ordinal", int64(k.ordinal))
		}
		if had {
			if err := exec(conn, "queue_delete", bind); err != nil {
				return err
			}
		}
		if !keep {
			continue
		}
		if err := exec(conn, "queue_insert", func(st *sqlite.Stmt) {
			bind(st)
			st.SetInt64(":rank", int64(row.rank))
			st.SetText(":queue", row.queue)
			st.SetText(":reason", row.reason)
			st.SetInt64(":organized", boolInt(row.organized))
			st.SetText(":goal", row.goal)
		}); err != nil {
			return err
		}
	}
	if err := exec(conn, "queue_counts_clear", func(*sqlite.Stmt) {}); err != nil {
		return err
	}
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := exec(conn, "queue_count_insert", func(st *sqlite.Stmt) {
			st.SetText(":name", name)
			st.SetInt64(":n", int64(counts[name]))
		}); err != nil {
			return err
		}
	}
	return nil
}

// scanQueued reads rows of p_work_queue joined with their items.
func scanQueued(conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt), each func(Queued) (bool, error)) error {
	st := prep(conn, name)
	bind(st)
	defer st.Reset()
	var buf []byte
	for {
		ok, err := st.Step()
		if err != nil {
			return err
		}
		if !ok {
			return nil
		}
		q := Queued{Queue: st.GetText("queue"), Reason: st.GetText("reason"), Organized: st.GetInt64("organized") != 0}
		n := st.GetLen("item")
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		st.GetBytes("item", buf)
		if err := events.DecodeWorkItem(buf, &q.Item.WorkItem); err != nil {
			return err
		}
		q.Item.SourcePath, q.Item.Ordinal = st.GetText("source_path"), int(st.GetInt64("ordinal"))
		if more, err := each(q); err != nil || !more {
			return err
		}
	}
}

// QueuePage calls each with the current work items of queue (QueueReady,
// ...) at the head, in ready's order, from the first after place (nil:
// from the first), until each returns false: the read follows what each
// takes, not the register.
func QueuePage(conn *sqlite.Conn, queue string, after *Place, each func(Queued) (bool, error)) error {
	return scanQueued(conn, "queue_page", func(st *sqlite.Stmt) {
		p := Place{Rank: -1}
		if after != nil {
			p = *after
		}
		st.SetText(":queue", queue)
		st.SetInt64(":rank", int64(p.Rank))
		st.SetText(":key", p.Key)
		st.SetText(":source_path", p.Source)
		st.SetInt64(":ordinal", int64(p.Ordinal))
	}, each)
}

// QueuedByKey returns the current work items of key (more than one when
// sources repeat it) as the head's work queues hold them.
func QueuedByKey(conn *sqlite.Conn, key string) ([]Queued, error) {
	var out []Queued
	err := scanQueued(conn, "queue_by_key", func(st *sqlite.Stmt) { st.SetText(":key", key) }, func(q Queued) (bool, error) {
		out = append(out, q)
		return true, nil
	})
	return out, err
}

// QueueCounts returns the head's counts of current work items: "items",
// "status:S" for each status S, "queue:Q" for each queue Q and
// "organized:Q" for the organized items of Q (see Organized).
func QueueCounts(conn *sqlite.Conn) (map[string]int, error) {
	out := map[string]int{}
	err := query(conn, "queue_counts", func(*sqlite.Stmt) {}, func(st *sqlite.Stmt) error {
		out[st.GetText("name")] = int(st.GetInt64("n"))
		return nil
	})
	return out, err
}

// GoalWork returns the keys of the first limit current work items whose
// goal is goal, in ready's order, and how many there are, at the head.
func GoalWork(conn *sqlite.Conn, goal string, limit int) (keys []string, total int, err error) {
	keys = []string{}
	if err := query(conn, "queue_goal_page", func(st *sqlite.Stmt) {
		st.SetText(":goal", goal)
		st.SetInt64(":limit", int64(limit))
	}, func(st *sqlite.Stmt) error {
		keys = append(keys, st.GetText("key"))
		return nil
	}); err != nil {
		return nil, 0, err
	}
	err = query(conn, "queue_count", func(st *sqlite.Stmt) { st.SetText(":name", "goal:"+goal) }, func(st *sqlite.Stmt) error {
		total = int(st.GetInt64("n"))
		return nil
	})
	return keys, total, err
}
