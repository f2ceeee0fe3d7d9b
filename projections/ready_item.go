package projections

import (
	"zombiezen.com/go/sqlite"
)

// ReadinessOf evaluates one work item as ReadinessAt would (head as there),
// reading only the item, its dependency closure and its live claim. ok is false when no
// item has the key.
func ReadinessOf(conn *sqlite.Conn, key string, rev, now int64, head bool) (r Readiness, ok bool, err error) {
	cache := map[string][]WorkItem{}
	load := func(k string) ([]WorkItem, error) {
		if its, ok := cache[k]; ok {
			return its, nil
		}
		its, err := WorkItemAt(conn, k, rev)
		cache[k] = its
		return its, err
	}
	items, err := load(key)
	if err != nil || len(items) == 0 {
		return Readiness{}, false, err
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
			return Readiness{}, false, err
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
	live, err := LiveClaimAt(conn, key, rev, now, head)
	if err != nil {
		return Readiness{}, false, err
	}
	r = evaluate(items[0], len(items), inCycle[key], byKey, closure, live)
	return r, true, nil
}
