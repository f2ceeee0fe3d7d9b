package projections

import (
	"sort"
	"strings"

	"zombiezen.com/go/sqlite"
)

// Canonical work item statuses.
const (
	StatusDraft      = "draft"
	StatusPlanned    = "planned"
	StatusReady      = "ready"
	StatusInProgress = "in_progress"
	StatusBlocked    = "blocked"
	StatusCompleted  = "completed"
	StatusCancelled  = "cancelled"
)

// Reasons a work item is not ready.
const (
	ReasonStatus            = "status"
	ReasonBlocker           = "blocker"
	ReasonDependencyOpen    = "dependency_open"
	ReasonDependencyMissing = "dependency_missing"
	ReasonDependencyCycle   = "dependency_cycle"
	ReasonClaimed           = "claimed"
	ReasonDuplicateKey      = "duplicate_key"
)

// Readiness is one work item with the reasons it cannot be claimed now;
// Ready is true when there are none.
type Readiness struct {
	Item    WorkItem
	Ready   bool
	Reasons []NotReadyReason
	Claim   *Claim
}

// NotReadyReason explains one obstacle.
type NotReadyReason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Key     string `json:"key,omitempty"`
}

// ReadinessAt evaluates every work item as of rev (head: rev is the log's
// head) for a reader whose clock reads now (UTC ms): claimable work has status planned or ready, no
// blocker, every required dependency completed, no dependency cycle, a
// unique key and no live claim. Results are sorted by priority then key.
func ReadinessAt(conn *sqlite.Conn, rev, now int64, head bool) ([]Readiness, error) {
	items, err := WorkItemsAt(conn, rev, head)
	if err != nil {
		return nil, err
	}
	held, err := LiveClaimsAt(conn, rev, now, head)
	if err != nil {
		return nil, err
	}
	return readiness(items, held), nil
}

// ReadinessFrom is ReadinessAt for a caller that has read the live
// claims at rev already (LiveClaimsAt), so they are not read twice.
func ReadinessFrom(conn *sqlite.Conn, rev int64, head bool, held []Claim) ([]Readiness, error) {
	items, err := WorkItemsAt(conn, rev, head)
	if err != nil {
		return nil, err
	}
	return readiness(items, held), nil
}

// readiness evaluates items against the live claims held (newest token
// first per item).
func readiness(items []WorkItem, held []Claim) []Readiness {
	live := map[string]*Claim{}
	for i := range held {
		if _, ok := live[held[i].Work]; !ok {
			live[held[i].Work] = &held[i]
		}
	}
	return Evaluate(items, live)
}

// Evaluate computes readiness for a set of work items held in memory (the
// preview of a source not yet indexed, or items read from projections),
// given the live claims by work key. Results are sorted by priority then
// key.
func Evaluate(items []WorkItem, live map[string]*Claim) []Readiness {
	byKey := map[string][]int{}
	for i, it := range items {
		byKey[it.Key] = append(byKey[it.Key], i)
	}
	inCycle := cycleMembers(items, byKey)
	out := make([]Readiness, 0, len(items))
	for _, it := range items {
		out = append(out, evaluate(it, len(byKey[it.Key]), inCycle[it.Key], byKey, items, live[it.Key]))
	}
	sort.SliceStable(out, func(i, j int) bool {
		pi, pj := PriorityRank(out[i].Item.Priority), PriorityRank(out[j].Item.Priority)
		if pi != pj {
			return pi < pj
		}
		if out[i].Item.Key != out[j].Item.Key {
			return out[i].Item.Key < out[j].Item.Key
		}
		return out[i].Item.SourcePath < out[j].Item.SourcePath
	})
	return out
}

// evaluate lists the reasons item cannot be claimed: dupes is how many
// sources declare its key, items and byKey resolve its dependencies, claim
// is the live claim on it (nil when free).
func evaluate(it WorkItem, dupes int, inCycle bool, byKey map[string][]int, items []WorkItem, claim *Claim) Readiness {
	r := Readiness{Item: it}
	if dupes > 1 {
		r.Reasons = append(r.Reasons, NotReadyReason{Code: ReasonDuplicateKey, Message: "key declared more than once"})
	}
	if it.Status != StatusPlanned && it.Status != StatusReady {
		r.Reasons = append(r.Reasons, NotReadyReason{Code: ReasonStatus, Message: "status is " + it.Status})
	}
	if strings.TrimSpace(it.Blocker) != "" {
		r.Reasons = append(r.Reasons, NotReadyReason{Code: ReasonBlocker, Message: it.Blocker})
	}
	if inCycle {
		r.Reasons = append(r.Reasons, NotReadyReason{Code: ReasonDependencyCycle, Message: "part of a dependency cycle"})
	}
	for _, d := range it.DependsOn {
		if !d.Required {
			continue
		}
		idx, ok := byKey[d.Key]
		switch {
		case !ok:
			r.Reasons = append(r.Reasons, NotReadyReason{Code: ReasonDependencyMissing, Message: "depends on unknown " + d.Key, Key: d.Key})
		case items[idx[0]].Status != StatusCompleted:
			r.Reasons = append(r.Reasons, NotReadyReason{Code: ReasonDependencyOpen, Message: d.Key + " is " + items[idx[0]].Status, Key: d.Key})
		}
	}
	if claim != nil {
		r.Claim = claim
		r.Reasons = append(r.Reasons, NotReadyReason{Code: ReasonClaimed, Message: "claimed by " + claim.Agent + " (session " + claim.SessionID + ")"})
	}
	r.Ready = len(r.Reasons) == 0
	return r
}

// PriorityRank orders priorities: p0/critical/urgent first, then p1/high,
// p2/medium/normal, p3/low, other p-numbers by number, unset last.
func PriorityRank(p string) int {
	s := strings.ToLower(strings.TrimSpace(p))
	switch s {
	case "critical", "urgent", "highest":
		return 0
	case "high":
		return 1
	case "medium", "normal":
		return 2
	case "low":
		return 3
	case "lowest":
		return 4
	case "":
		return 100
	}
	if len(s) >= 2 && s[0] == 'p' {
		n := 0
		for _, c := range s[1:] {
			if c < '0' || c > '9' {
				return 99
			}
			n = n*10 + int(c-'0')
			if n > 90 {
				return 90
			}
		}
		return n
	}
	return 99
}

// cycleMembers returns the keys that lie on a cycle of dependency edges.
func cycleMembers(items []WorkItem, byKey map[string][]int) map[string]bool {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	onCycle := map[string]bool{}
	var stack []string
	var visit func(k string)
	visit = func(k string) {
		color[k] = grey
		stack = append(stack, k)
		for _, idx := range byKey[k] {
			for _, d := range items[idx].DependsOn {
				if _, ok := byKey[d.Key]; !ok {
					continue
				}
				switch color[d.Key] {
				case white:
					visit(d.Key)
				case grey:
					for i := len(stack) - 1; i >= 0; i-- {
						onCycle[stack[i]] = true
						if stack[i] == d.Key {
							break
						}
					}
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[k] = black
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if color[k] == white {
			visit(k)
		}
	}
	return onCycle
}
