package commands

import (
	"sort"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// envelopeSlack is what an event's envelope and a part's own fields may
// add to its elements: a single element is refused when it would not fit
// one event beside them.
const envelopeSlack = 64 << 10

// unit is one element of an index as it goes into a part: a work item (with
// its declaration number), a goal, a rule, or a drop, with its encoded
// size.
type unit struct {
	item   *events.WorkItem
	repeat int
	goal   *events.Goal
	rule   *events.Rule
	drop   *events.ItemRef
	dropG  string
	dropR  string
	size   int
}

// sourcePayloads returns the source_indexed payloads that take src.Path
// from what the log holds to src, in the order they are appended (all in
// the caller's transaction):
//
//   - a source that holds no element yet (first index, or after a
//     removal) gets src whole, as it always did;
//   - a source that holds elements gets a delta: only the work items,
//     goals and rules added or changed, and those dropped, so that a
//     reindex after editing one task stores that task, not the file (an
//     element is unchanged when it differs only in its source reference's
//     content hash, which the delta restamps: events.Restamp);
//   - either is split into parts of at most events.MaxPartBytes of
//     elements when it would not fit one (the first part of a whole index
//     replaces, the later ones are deltas that add), so that no event
//     exceeds events.MaxEventBytes and every export imports.
//
// Errors: InvalidInput naming the element when one element alone would
// be more than an event may hold.
func sourcePayloads(tx *events.Tx, src events.SourceIndexed) ([]events.SourceIndexed, error) {
	held, err := projections.ElementsOf(tx.Conn, src.Path, src.ContentHash)
	if err != nil {
		return nil, err
	}
	header := src
	header.Items, header.Goals, header.Rules = nil, nil, nil
	header.Delta, header.ItemRepeats, header.Dropped, header.Part, header.Parts = false, nil, nil, 0, 0
	delta := !held.Empty()
	units, err := sourceUnits(held, src, delta)
	if err != nil {
		return nil, err
	}
	headRaw, err := events.MarshalPayload(header)
	if err != nil {
		return nil, err
	}
	total := len(headRaw)
	for _, u := range units {
		total += u.size
	}
	if !delta && total <= events.MaxPartBytes {
		return []events.SourceIndexed{src}, nil // the whole index, as before
	}
	groups, err := groupUnits(src.Path, units, len(headRaw))
	if err != nil {
		return nil, err
	}
	out := make([]events.SourceIndexed, 0, len(groups))
	for i, g := range groups {
		p := header
		p.Delta = delta || i > 0
		if len(groups) > 1 {
			p.Part, p.Parts = i+1, len(groups)
			if i < len(groups)-1 {
				p.Issues = nil // the last part sets the source's row
			}
		}
		out = append(out, fillPart(p, g))
	}
	return out, nil
}

// sourceUnits returns the elements of src a payload must carry: all of
// them, or with delta only those that differ from what the log holds
// (held), then the ones dropped since.
func sourceUnits(held *projections.SourceElements, src events.SourceIndexed, delta bool) ([]unit, error) {
	var units []unit
	repeats := map[string]int{}
	firstGoal, firstRule := map[string]bool{}, map[string]bool{}
	wantItems := map[events.ItemRef]bool{}
	for i := range src.Items {
		it := &src.Items[i]
		ref := events.ItemRef{Key: it.Key, Repeat: repeats[it.Key]}
		repeats[it.Key]++
		wantItems[ref] = true
		raw, err := events.MarshalPayload(it)
		if err != nil {
			return nil, err
		}
		if delta && held.Items[ref] == string(raw) {
			continue
		}
		units = append(units, unit{item: it, repeat: ref.Repeat, size: len(raw) + 1})
	}
	for i := range src.Goals {
		g := &src.Goals[i]
		if firstGoal[g.Key] {
			continue // the first declaration of a key is the goal
		}
		firstGoal[g.Key] = true
		raw, err := events.MarshalPayload(g)
		if err != nil {
			return nil, err
		}
		if delta && held.Goals[g.Key] == string(raw) {
			continue
		}
		units = append(units, unit{goal: g, size: len(raw) + 1})
	}
	for i := range src.Rules {
		r := &src.Rules[i]
		if firstRule[r.Key] {
			continue
		}
		firstRule[r.Key] = true
		raw, err := events.MarshalPayload(r)
		if err != nil {
			return nil, err
		}
		if delta && held.Rules[r.Key] == string(raw) {
			continue
		}
		units = append(units, unit{rule: r, size: len(raw) + 1})
	}
	if !delta {
		return units, nil
	}
	var drops []events.ItemRef
	for ref := range held.Items {
		if !wantItems[ref] {
			drops = append(drops, ref)
		}
	}
	sort.Slice(drops, func(i, j int) bool {
		if drops[i].Key != drops[j].Key {
			return drops[i].Key < drops[j].Key
		}
		return drops[i].Repeat < drops[j].Repeat
	})
	for i := range drops {
		units = append(units, unit{drop: &drops[i], size: len(drops[i].Key) + 32})
	}
	for _, k := range sortedMissing(held.Goals, firstGoal) {
		units = append(units, unit{dropG: k, size: len(k) + 8})
	}
	for _, k := range sortedMissing(held.Rules, firstRule) {
		units = append(units, unit{dropR: k, size: len(k) + 8})
	}
	return units, nil
}

// groupUnits groups units into parts of at most events.MaxPartBytes with
// their header (headBytes); a part holds at least one unit, and there is
// at least one part (a delta that changes nothing still records the
// index). Errors: InvalidInput naming the element when one alone would be
// more than an event may hold.
func groupUnits(path string, units []unit, headBytes int) ([][]unit, error) {
	budget := events.MaxPartBytes - headBytes
	var groups [][]unit
	used := 0
	for _, u := range units {
		if u.size+headBytes+envelopeSlack > events.MaxEventBytes {
			return nil, fault.New(fault.InvalidInput, "index source %s: %s is %d bytes encoded, more than one event may hold (%d bytes)", path, u.name(), u.size, events.MaxEventBytes).
				With("path", path).With("bytes", u.size).With("max", events.MaxEventBytes).WithHint("awr source list")
		}
		if len(groups) == 0 || used+u.size > budget && used > 0 {
			groups = append(groups, nil)
			used = 0
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], u)
		used += u.size
	}
	if len(groups) == 0 {
		groups = append(groups, nil)
	}
	return groups, nil
}

// fillPart returns part p holding the elements of g.
func fillPart(p events.SourceIndexed, g []unit) events.SourceIndexed {
	var repeated bool
	for _, u := range g {
		switch {
		case u.item != nil:
			p.Items = append(p.Items, *u.item)
			p.ItemRepeats = append(p.ItemRepeats, u.repeat)
			repeated = repeated || u.repeat != 0
		case u.goal != nil:
			p.Goals = append(p.Goals, *u.goal)
		case u.rule != nil:
			p.Rules = append(p.Rules, *u.rule)
		default:
			if p.Dropped == nil {
				p.Dropped = &events.SourceDropped{}
			}
			switch {
			case u.drop != nil:
				p.Dropped.Items = append(p.Dropped.Items, *u.drop)
			case u.dropG != "":
				p.Dropped.Goals = append(p.Dropped.Goals, u.dropG)
			default:
				p.Dropped.Rules = append(p.Dropped.Rules, u.dropR)
			}
		}
	}
	if !p.Delta || !repeated {
		p.ItemRepeats = nil
	}
	return p
}

// name says which element u is, for an error.
func (u unit) name() string {
	switch {
	case u.item != nil:
		return "work item " + u.item.Key
	case u.goal != nil:
		return "goal " + u.goal.Key
	case u.rule != nil:
		return "rule " + u.rule.Key
	}
	return "the list of dropped elements"
}

// sortedMissing returns the keys of held not in want, sorted.
func sortedMissing(held map[string]string, want map[string]bool) []string {
	var out []string
	for k := range held {
		if !want[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
