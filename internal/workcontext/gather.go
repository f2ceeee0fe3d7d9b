package workcontext

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// maxRelated and maxHistory bound the optional chunks of a packet.
const (
	maxRelated = 8
	// maxRelatedClosed bounds the completed and cancelled items among
	// them; the related items not listed are counted by status.
	maxRelatedClosed = 3
	maxHistory       = 12
	maxEarlier       = 8
)

// Gather gathers, at rev, everything a packet for work (and, if set,
// session) may draw on: the item, goals, rules in scope, dependencies with
// their status, the latest checkpoint of the session's chain (its own or
// the one it inherited), earlier checkpoints, related items (same goal or
// milestone) and the recent history of the work. head says rev is the
// log's head, where only the register's current rows are read.
func Gather(conn *sqlite.Conn, rev int64, head bool, work, session string) (Input, error) {
	return gather(conn, rev, head, work, session, true)
}

// GatherOpen is Gather without the knowledge items (in.Knowledge, set
// when there is a checkpoint, holds no item, its Since set): for a reader
// that pages them itself (recovery inspect: the items in force with
// projections.KnowledgePageAt, those closed with
// projections.ScanClosedAfter), whose cost must follow its pages, not
// every item in force or closed since the checkpoint.
func GatherOpen(conn *sqlite.Conn, rev int64, head bool, work, session string) (Input, error) {
	return gather(conn, rev, head, work, session, false)
}

// gather is Gather, with the closed knowledge items or without them.
func gather(conn *sqlite.Conn, rev int64, head bool, work, session string, closes bool) (Input, error) {
	in := Input{Work: work, SessionID: session, AtRevision: rev}
	// The item and its dependencies are read by key, and of the rest of
	// the register only the columns (briefs): the related items listed
	// are decoded, no other, so that a packet over 10,000 items does not
	// decode them all.
	it, err := firstItemAt(conn, work, rev)
	if err != nil {
		return in, err
	}
	if it != nil {
		in.Item = it
		for _, d := range it.DependsOn {
			dep, err := firstItemAt(conn, d.Key, rev)
			if err != nil {
				return in, err
			}
			found := dep != nil
			status := ""
			if found {
				status = dep.Status
			}
			in.Dependencies = append(in.Dependencies, Dependency{Key: d.Key, Required: d.Required, Status: status, Found: found})
		}
	}
	if in.Goals, err = projections.GoalsAt(conn, rev); err != nil {
		return in, err
	}
	if err := in.gatherRelatedAndLinks(conn, rev, head); err != nil {
		return in, err
	}
	if err := in.gatherRules(conn, rev); err != nil {
		return in, err
	}
	if err := in.gatherCheckpoints(conn, rev); err != nil {
		return in, err
	}
	if in.Latest != nil {
		// Items close only at checkpoints: those the latest closed are
		// shown once, until the next checkpoint.
		if closes {
			if in.Knowledge, err = projections.KnowledgeStateAt(conn, work, rev, in.Latest.Seq-1); err != nil {
				return in, err
			}
		} else {
			in.Knowledge = projections.SortKnowledge(nil, 0)
		}
		in.Knowledge.Since = in.Latest.Seq - 1
		if in.Changed, err = changedSince(conn, work, in.Latest.Seq, rev, in.Item); err != nil {
			return in, err
		}
	}
	if in.Executions, in.ExecutionCount, err = projections.LatestExecutionsOfWorkAt(conn, work, rev, MaxExecutions); err != nil {
		return in, err
	}
	hist, err := history(conn, rev, work)
	if err != nil {
		return in, err
	}
	in.History = hist
	return in, nil
}

// gatherRelatedAndLinks sets the related items of in.Item and, for a
// packet that lists the goals, their counts of work (in.Goals read).
func (in *Input) gatherRelatedAndLinks(conn *sqlite.Conn, rev int64, head bool) error {
	it := in.Item
	if head {
		// At the head the indexes of goal and milestone give the related
		// items, and the goals' counts are read only for a packet that
		// shows them: what the packet lists, not the register.
		if it != nil {
			briefs, err := projections.RelatedBriefsHead(conn, it.Goal, it.Milestone)
			if err != nil {
				return err
			}
			if err := in.gatherRelated(conn, rev, briefs); err != nil {
				return err
			}
		}
		if in.showsGoals() {
			in.GoalLinks = map[string]GoalLink{}
			for _, g := range in.Goals {
				n, done, err := projections.GoalCountHead(conn, g.Key)
				if err != nil {
					return err
				}
				if n > 0 {
					in.GoalLinks[g.Key] = GoalLink{Work: n, Completed: done}
				}
			}
		}
	} else {
		milestone := ""
		if it != nil {
			milestone = it.Milestone
		}
		briefs, err := projections.ItemBriefsAt(conn, rev, false, milestone)
		if err != nil {
			return err
		}
		if it != nil {
			if err := in.gatherRelated(conn, rev, briefs); err != nil {
				return err
			}
		}
		if in.showsGoals() {
			in.GoalLinks = goalLinks(briefs, in.Goals)
		}
	}
	return nil
}

// gatherRelated lists the related items among briefs (in.Item's goal
// or milestone), each read whole, and counts those it leaves out.
func (in *Input) gatherRelated(conn *sqlite.Conn, rev int64, briefs []projections.ItemBrief) error {
	listed, more := related(*in.Item, briefs)
	in.RelatedMore = more
	for _, b := range listed {
		r, err := itemAt(conn, b, rev)
		if err != nil {
			return err
		}
		in.Related = append(in.Related, r)
	}
	return nil
}

// gatherRules adds the rules in scope of the item and the problems of
// the rules sources.
func (in *Input) gatherRules(conn *sqlite.Conn, rev int64) error {
	srcs, err := projections.SourcesAt(conn, rev, false)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		if s.Role != "rules" {
			continue
		}
		for _, is := range s.Issues {
			in.RuleIssues = append(in.RuleIssues, fmt.Sprintf("rules source %s:%d: %s", is.Path, is.Line, is.Message))
		}
	}
	rules, err := projections.RulesAt(conn, rev)
	if err != nil {
		return err
	}
	for _, r := range rules {
		if in.Item == nil || RuleInScope(r.Paths, in.Item.Paths) {
			in.Rules = append(in.Rules, r)
		}
	}
	return nil
}

// gatherCheckpoints sets the latest checkpoint of the session's chain
// (or, for a new session, of the work) and up to maxEarlier before it.
func (in *Input) gatherCheckpoints(conn *sqlite.Conn, rev int64) error {
	chain, err := sessionChain(conn, rev, in.Work, in.SessionID)
	if err != nil {
		return err
	}
	// The chain is newest first and its sessions follow one another, so
	// walking it stops once the latest checkpoint and the earlier ones the
	// packet shows are found, reading no more of each session's
	// checkpoints than are still missing.
	var cps []projections.Checkpoint
	for _, id := range chain {
		c, err := projections.SessionLatestCheckpointsAt(conn, id, rev, maxEarlier+1-len(cps))
		if err != nil {
			return err
		}
		cps = append(cps, c...)
		if len(cps) > maxEarlier {
			break
		}
	}
	if len(cps) == 0 && in.Item != nil {
		// A new session on the work (not a resume) still sees where the
		// last one on the same work left off.
		if cps, err = projections.LatestCheckpointsOfWorkAt(conn, in.Work, rev, maxEarlier+1); err != nil {
			return err
		}
	}
	sort.Slice(cps, func(i, j int) bool { return cps[i].Seq < cps[j].Seq })
	if n := len(cps); n > 0 {
		latest := cps[n-1]
		in.Latest = &latest
		earlier := cps[:n-1]
		if len(earlier) > maxEarlier {
			earlier = earlier[len(earlier)-maxEarlier:]
		}
		in.Earlier = earlier
	}
	return nil
}

// RuleInScope reports whether a rule scoped to rulePaths applies to an item
// touching itemPaths; unscoped rules and unscoped items always match.
func RuleInScope(rulePaths, itemPaths []string) bool {
	if len(rulePaths) == 0 || len(itemPaths) == 0 {
		return true
	}
	for _, rp := range rulePaths {
		for _, ip := range itemPaths {
			rp2, ip2 := strings.TrimSuffix(rp, "/"), strings.TrimSuffix(ip, "/")
			if ok, _ := path.Match(rp, ip); ok || strings.HasPrefix(ip2, rp2) || strings.HasPrefix(rp2, ip2) {
				return true
			}
		}
	}
	return false
}

// sessionChain returns session and its predecessors, newest first; without
// a session, the chain of the latest session started on work.
func sessionChain(conn *sqlite.Conn, rev int64, work, session string) ([]string, error) {
	if session == "" {
		// The sessions projection knows each session's start, so the
		// latest start is a few rows of its index, not a walk of the
		// item's work log past every checkpoint since.
		id, err := projections.LatestSessionOfWorkAt(conn, work, rev)
		if err != nil || id == "" {
			return nil, err
		}
		session = id
	}
	var out []string
	seen := map[string]bool{}
	for id := session; id != "" && !seen[id]; {
		seen[id] = true
		s, err := projections.SessionAt(conn, id, rev)
		if err != nil {
			return nil, err
		}
		if s == nil {
			break
		}
		out = append(out, id)
		id = s.PredecessorID
	}
	return out, nil
}

// history renders the latest events of the work item, oldest first.
func history(conn *sqlite.Conn, rev int64, work string) ([]string, error) {
	evs, err := projections.WorkEventsAt(conn, work, "", rev, maxHistory)
	if err != nil {
		return nil, err
	}
	var lines []string
	for i := len(evs) - 1; i >= 0; i-- {
		e := evs[i]
		lines = append(lines, fmt.Sprintf("- seq %d %s %s by %s", e.Seq, time.UnixMilli(e.OccurredAt).UTC().Format(time.RFC3339), e.Kind, SafeText(e.Actor)))
	}
	return lines, nil
}

// relatedRank orders the related items a packet lists: work under way or
// stuck first (whoever picks this item up may have to coordinate with
// it), then work still to do, then closed work.
func relatedRank(status string) int {
	switch status {
	case projections.StatusInProgress, projections.StatusBlocked:
		return 0
	case projections.StatusCompleted, projections.StatusCancelled:
		return 2
	}
	return 1
}

// related returns the items that share it's goal or milestone, at most
// maxRelated of them (at most maxRelatedClosed closed), in relatedRank
// order and key order within a rank (then source and ordinal), and how
// many of each status it left out. Gather reads only those listed whole.
func related(it projections.WorkItem, briefs []projections.ItemBrief) ([]projections.ItemBrief, []StatusCount) {
	var all []projections.ItemBrief
	for _, other := range briefs {
		if other.Key == it.Key || (it.Goal == "" || other.Goal != it.Goal) && (it.Milestone == "" || other.Milestone != it.Milestone) {
			continue
		}
		all = append(all, other)
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if ra, rb := relatedRank(a.Status), relatedRank(b.Status); ra != rb {
			return ra < rb
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.SourcePath != b.SourcePath {
			return a.SourcePath < b.SourcePath
		}
		return a.Ordinal < b.Ordinal
	})
	var listed []projections.ItemBrief
	left := map[string]int{}
	closed := 0
	for _, r := range all {
		if relatedRank(r.Status) == 2 {
			closed++
		}
		if len(listed) >= maxRelated || closed > maxRelatedClosed && relatedRank(r.Status) == 2 {
			left[r.Status]++
			continue
		}
		listed = append(listed, r)
	}
	more := make([]StatusCount, 0, len(left))
	for st, n := range left {
		more = append(more, StatusCount{Status: st, Count: n})
	}
	sort.Slice(more, func(i, j int) bool {
		if more[i].Count != more[j].Count {
			return more[i].Count > more[j].Count
		}
		return more[i].Status < more[j].Status
	})
	return listed, more
}

// firstItemAt is the work item key as of rev, the first source's when
// two declare it (by source path, then ordinal); nil when none does.
func firstItemAt(conn *sqlite.Conn, key string, rev int64) (*projections.WorkItem, error) {
	items, err := projections.WorkItemAt(conn, key, rev)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	return &items[0], nil
}

// itemAt is the work item b briefs, read whole as of rev.
func itemAt(conn *sqlite.Conn, b projections.ItemBrief, rev int64) (projections.WorkItem, error) {
	items, err := projections.WorkItemAt(conn, b.Key, rev)
	if err != nil {
		return projections.WorkItem{}, err
	}
	for _, it := range items {
		if it.SourcePath == b.SourcePath && it.Ordinal == b.Ordinal {
			return it, nil
		}
	}
	return projections.WorkItem{}, fmt.Errorf("gather: work item %s (%s #%d) not found at revision %d", b.Key, b.SourcePath, b.Ordinal, rev)
}
