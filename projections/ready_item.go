package projections

import (
	"zombiezen.com/go/sqlite"
)

// ReadinessOf evaluates one work item as ReadinessAt would (head as there),
// reading only the item, its dependency closure and its live claim. ok is false when no
// item has the key.
func ReadinessOf(conn *sqlite.Conn, key string, rev, now int64, head bool) (r Readiness, ok bool, err error) {
	r, _, ok, err = ClaimReadinessOf(conn, key, nil, rev, now, head)
	return r, ok, err
}

// ClaimReadinessOf is ReadinessOf that also returns the live claim it
// read (LiveClaimAt; nil when none, and when ok is false, for it then
// reads no claim). items, when not nil, are the key's items at rev as
// WorkItemAt returns them, which the caller has read already.
func ClaimReadinessOf(conn *sqlite.Conn, key string, items []WorkItem, rev, now int64, head bool) (r Readiness, live *Claim, ok bool, err error) {
	cache := map[string][]WorkItem{}
	if items != nil {
		cache[key] = items
	}
	load := func(k string) ([]WorkItem, error) {
		if its, ok := cache[k]; ok {
			return its, nil
		}
		its, err := WorkItemAt(conn, k, rev)
		cache[k] = its
		return its, err
	}
	items, err = load(key)
	if err != nil || len(items) == 0 {
		return Readiness{}, nil, false, err
	}
	// Walk the dependency closure so cycles through this item are found.
	var closure []WorkItem
	byKey := map[string][]int{}
	queue := []string{key}
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		if _, seen := byKey[k]; seen {
			continue
		}
		its, err := load(k)
		if err != nil {
			return Readiness{}, nil, false, err
		}
		if len(its) == 0 {
			continue
		}
		for _, it := range its {
			byKey[k] = append(byKey[k], len(closure))
			closure = append(closure, it)
			for _, d := range it.DependsOn {
				queue = append(queue, d.Key)
			}
		}
	}
	inCycle := cycleMembers(closure, byKey)
	live, err = LiveClaimAt(conn, key, rev, now, head)
	if err != nil {
		return Readiness{}, nil, false, err
	}
	r = evaluate(items[0], len(items), inCycle[key], byKey, closure, live)
	return r, live, true, nil
}
