package commands

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// KnowledgeFlags are the loop, decision, fact and hypothesis changes a
// checkpoint may make. Every flag is repeatable; what a checkpoint does not
// mention stays as it was, so nothing is lost by omission.
type KnowledgeFlags struct {
	OpenLoops    []string `name:"open-loop" sep:"none" json:"open_loops,omitempty" help:"Open a loop: an unfinished thread a successor must know (repeatable; the text of a loop already open is that loop)." placeholder:"TEXT"`
	ResolveLoops []string `name:"resolve-loop" sep:"none" json:"resolve_loops,omitempty" help:"Resolve an open loop (repeatable)." placeholder:"ID[=RESOLUTION]"`
	DropLoops    []string `name:"drop-loop" sep:"none" json:"drop_loops,omitempty" help:"Drop an open loop that will not be done (repeatable)." placeholder:"ID[=REASON]"`
	Decisions    []string `name:"decision" sep:"none" json:"decisions,omitempty" help:"Record a decision; it stays in every packet until retracted or superseded (repeatable)." placeholder:"TEXT"`
	Facts        []string `name:"fact" sep:"none" json:"facts,omitempty" help:"Record a fact established by the work (repeatable)." placeholder:"TEXT"`
	Hypotheses   []string `name:"hypothesis" sep:"none" json:"hypotheses,omitempty" help:"Record a hypothesis, shown as unverified until confirmed (repeatable)." placeholder:"TEXT"`
	Confirm      []string `name:"confirm" sep:"none" json:"confirm,omitempty" help:"Confirm a hypothesis: it becomes a fact (repeatable)." placeholder:"ID"`
	Retract      []string `name:"retract" sep:"none" json:"retract,omitempty" help:"Retract a fact or hypothesis found false, or a decision reversed (repeatable)." placeholder:"ID[=REASON]"`
	Supersede    []string `name:"supersede" sep:"none" json:"supersede,omitempty" help:"Replace a decision, fact or hypothesis by a new version (repeatable)." placeholder:"ID=TEXT"`
}

// texts lists every free text of the flags with its field name, for the
// secret check.
func (f KnowledgeFlags) texts() [][2]string {
	var out [][2]string
	add := func(field string, vals []string) {
		for i, v := range vals {
			out = append(out, [2]string{fmt.Sprintf("%s[%d]", field, i), v})
		}
	}
	add("open_loops", f.OpenLoops)
	add("resolve_loops", f.ResolveLoops)
	add("drop_loops", f.DropLoops)
	add("decisions", f.Decisions)
	add("facts", f.Facts)
	add("hypotheses", f.Hypotheses)
	add("retract", f.Retract)
	add("supersede", f.Supersede)
	return out
}

// knowledgeFlag names a flag for errors.
var knowledgeFlag = map[string]string{
	events.ChangeResolve: "--resolve-loop", events.ChangeDrop: "--drop-loop", events.ChangeConfirm: "--confirm",
	events.ChangeRetract: "--retract", events.ChangeSupersede: "--supersede",
}

// planKnowledge turns the flags into the changes of one checkpoint on
// work, against the item's knowledge at the transaction's head: it assigns
// ids to new items, matches re-stated texts to the items they repeat, and
// refuses every change that does not apply. Nothing is written here.
// Errors: InvalidInput for an empty text, a malformed ID=TEXT or an id
// named twice; NotFound for an id the work item never had;
// InvalidTransition for a change to a closed item or to the wrong kind.
func planKnowledge(tx *events.Tx, work string, f KnowledgeFlags) ([]events.KnowledgeChange, error) {
	// Only the live items are read up front; an id not among them is
	// looked up alone, so the plan's cost follows what is in force, not
	// every item the work has ever closed.
	current, err := projections.LiveKnowledgeAt(tx.Conn, work, tx.Head())
	if err != nil {
		return nil, err
	}
	byID := map[string]*projections.Knowledge{}
	// kind + projections.MatchText key -> the live ids with that text,
	// oldest first (a log written before texts were matched so may hold
	// several; hygiene names them).
	liveText := map[string][]string{}
	for i := range current {
		k := &current[i]
		byID[k.ID] = k
		key := k.Kind + "\x00" + projections.MatchText(k.Text)
		liveText[key] = append(liveText[key], k.ID)
	}
	lookup := func(id string) (*projections.Knowledge, error) {
		if k, ok := byID[id]; ok {
			return k, nil
		}
		k, err := projections.KnowledgeItem(tx.Conn, work, id)
		if err != nil {
			return nil, err
		}
		byID[id] = k
		return k, nil
	}
	next := map[string]int64{}
	newID := func(kind string) (string, error) {
		if next[kind] == 0 {
			n, err := projections.NextKnowledgeNum(tx.Conn, work, kind, tx.Head())
			if err != nil {
				return "", err
			}
			next[kind] = n
		}
		id := fmt.Sprintf("%s-%d", events.KnowledgePrefix(kind), next[kind])
		next[kind]++
		return id, nil
	}
	var changes []events.KnowledgeChange
	named := map[string]string{}
	closing := map[string]bool{} // ids this checkpoint closes
	// target finds the live item an id names, for the change op.
	target := func(op, raw string, kinds ...string) (*projections.Knowledge, string, error) {
		flag := knowledgeFlag[op]
		id, note, _ := strings.Cut(raw, "=")
		id = strings.ToUpper(strings.TrimSpace(id))
		note = strings.TrimSpace(note)
		if id == "" {
			return nil, "", fault.New(fault.InvalidInput, "checkpoint: %s %q names no id", flag, raw).With("flag", flag)
		}
		if prev, dup := named[id]; dup {
			return nil, "", fault.New(fault.InvalidInput, "checkpoint: %s is named by both %s and %s", id, prev, flag).With("flag", flag).With("id", id)
		}
		named[id] = flag
		k, err := lookup(id)
		if err != nil {
			return nil, "", err
		}
		if k == nil {
			return nil, "", fault.New(fault.NotFound, "checkpoint: %s: %s has no loop, decision, fact or hypothesis %s", flag, work, id).
				With("flag", flag).With("id", id).WithHint("awr context hygiene --work %s", work)
		}
		if !k.Live() {
			return nil, "", fault.New(fault.InvalidTransition, "checkpoint: %s %s: it was %s at seq %d", flag, id, k.State, k.ClosedSeq).
				With("flag", flag).With("id", id).With("state", k.State)
		}
		for _, kind := range kinds {
			if k.Kind == kind {
				return k, note, nil
			}
		}
		return nil, "", fault.New(fault.InvalidTransition, "checkpoint: %s %s: it is a %s, and %s applies to a %s", flag, id, k.Kind, flag, strings.Join(kinds, " or ")).
			With("flag", flag).With("id", id).With("kind", k.Kind)
	}
	for _, raw := range f.ResolveLoops {
		k, note, err := target(events.ChangeResolve, raw, events.KnowledgeLoop)
		if err != nil {
			return nil, err
		}
		changes = append(changes, events.KnowledgeChange{Op: events.ChangeResolve, ID: k.ID, Note: note})
		closing[k.ID] = true
	}
	for _, raw := range f.DropLoops {
		k, note, err := target(events.ChangeDrop, raw, events.KnowledgeLoop)
		if err != nil {
			return nil, err
		}
		changes = append(changes, events.KnowledgeChange{Op: events.ChangeDrop, ID: k.ID, Note: note})
		closing[k.ID] = true
	}
	for _, raw := range f.Confirm {
		k, _, err := target(events.ChangeConfirm, raw, events.KnowledgeHypothesis)
		if err != nil {
			return nil, err
		}
		changes = append(changes, events.KnowledgeChange{Op: events.ChangeConfirm, ID: k.ID})
		// A confirmed hypothesis is a fact: the same text given as a fact
		// is that fact.
		norm := projections.MatchText(k.Text)
		hyp := events.KnowledgeHypothesis + "\x00" + norm
		liveText[hyp] = slices.DeleteFunc(liveText[hyp], func(id string) bool { return id == k.ID })
		liveText[events.KnowledgeFact+"\x00"+norm] = append(liveText[events.KnowledgeFact+"\x00"+norm], k.ID)
	}
	for _, raw := range f.Retract {
		k, note, err := target(events.ChangeRetract, raw, events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis)
		if err != nil {
			return nil, err
		}
		changes = append(changes, events.KnowledgeChange{Op: events.ChangeRetract, ID: k.ID, Note: note})
		closing[k.ID] = true
	}
	var opens []events.KnowledgeChange
	for _, raw := range f.Supersede {
		if !strings.Contains(raw, "=") || strings.TrimSpace(raw[strings.Index(raw, "=")+1:]) == "" {
			return nil, fault.New(fault.InvalidInput, "checkpoint: --supersede %q needs ID=TEXT, the text of the new version", raw).With("flag", "--supersede")
		}
		k, text, err := target(events.ChangeSupersede, raw, events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis)
		if err != nil {
			return nil, err
		}
		id, err := newID(k.Kind)
		if err != nil {
			return nil, err
		}
		changes = append(changes, events.KnowledgeChange{Op: events.ChangeSupersede, ID: k.ID, By: id})
		closing[k.ID] = true
		opens = append(opens, events.KnowledgeChange{Op: events.ChangeOpen, ID: id, Kind: k.Kind, Text: text, Supersedes: k.ID})
		// The new version is live: the same text given again is it.
		key := k.Kind + "\x00" + projections.MatchText(text)
		liveText[key] = append(liveText[key], id)
	}
	for _, add := range []struct {
		kind, flag string
		texts      []string
	}{
		{events.KnowledgeLoop, "--open-loop", f.OpenLoops},
		{events.KnowledgeDecision, "--decision", f.Decisions},
		{events.KnowledgeFact, "--fact", f.Facts},
		{events.KnowledgeHypothesis, "--hypothesis", f.Hypotheses},
	} {
		for _, text := range add.texts {
			if projections.NormalizeText(text) == "" {
				return nil, fault.New(fault.InvalidInput, "checkpoint: a %s is empty", add.flag).With("flag", add.flag)
			}
			// Case, spacing and end punctuation aside, the text of a
			// live item is that item.
			norm := projections.MatchText(text)
			if slices.ContainsFunc(liveText[add.kind+"\x00"+norm], func(id string) bool { return !closing[id] }) {
				continue // the same text as a live item this checkpoint keeps is that item
			}
			id, err := newID(add.kind)
			if err != nil {
				return nil, err
			}
			liveText[add.kind+"\x00"+norm] = append(liveText[add.kind+"\x00"+norm], id)
			opens = append(opens, events.KnowledgeChange{Op: events.ChangeOpen, ID: id, Kind: add.kind, Text: strings.TrimSpace(text)})
		}
	}
	return append(changes, opens...), nil
}
