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
	p, err := newKnowledgePlan(tx, work)
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		op    string
		raws  []string
		kinds []string
	}{
		{events.ChangeResolve, f.ResolveLoops, []string{events.KnowledgeLoop}},
		{events.ChangeDrop, f.DropLoops, []string{events.KnowledgeLoop}},
		{events.ChangeConfirm, f.Confirm, []string{events.KnowledgeHypothesis}},
		{events.ChangeRetract, f.Retract, []string{events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis}},
	} {
		for _, raw := range c.raws {
			if err := p.close(c.op, raw, c.kinds...); err != nil {
				return nil, err
			}
		}
	}
	for _, raw := range f.Supersede {
		if err := p.supersede(raw); err != nil {
			return nil, err
		}
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
			if err := p.open(add.kind, add.flag, text); err != nil {
				return nil, err
			}
		}
	}
	return append(p.changes, p.opens...), nil
}

// knowledgePlan is planKnowledge's state: the work item's knowledge as
// far as the plan has read it, and the changes planned so far (closing
// changes first, then the items they open).
type knowledgePlan struct {
	tx   *events.Tx
	work string
	byID map[string]*projections.Knowledge
	// liveText maps kind + projections.MatchText key to the live ids
	// with that text, oldest first (a log written before texts were
	// matched so may hold several; hygiene names them).
	liveText map[string][]string
	next     map[string]int64  // kind -> the number of its next new id
	named    map[string]string // id -> the flag that named it
	closing  map[string]bool   // ids this checkpoint closes
	changes  []events.KnowledgeChange
	opens    []events.KnowledgeChange
}

// newKnowledgePlan reads only the live items up front; an id not among
// them is looked up alone (lookup), so the plan's cost follows what is in
// force, not every item the work has ever closed.
func newKnowledgePlan(tx *events.Tx, work string) (*knowledgePlan, error) {
	current, err := projections.LiveKnowledgeAt(tx.Conn, work, tx.Head())
	if err != nil {
		return nil, err
	}
	p := &knowledgePlan{tx: tx, work: work, byID: map[string]*projections.Knowledge{}, liveText: map[string][]string{},
		next: map[string]int64{}, named: map[string]string{}, closing: map[string]bool{}}
	for i := range current {
		k := &current[i]
		p.byID[k.ID] = k
		p.live(k.Kind, k.Text, k.ID)
	}
	return p, nil
}

// live records that id is a live item of kind with text.
func (p *knowledgePlan) live(kind, text, id string) {
	key := kind + "\x00" + projections.MatchText(text)
	p.liveText[key] = append(p.liveText[key], id)
}

func (p *knowledgePlan) lookup(id string) (*projections.Knowledge, error) {
	if k, ok := p.byID[id]; ok {
		return k, nil
	}
	k, err := projections.KnowledgeItem(p.tx.Conn, p.work, id)
	if err != nil {
		return nil, err
	}
	p.byID[id] = k
	return k, nil
}

// newID assigns the next id of kind.
func (p *knowledgePlan) newID(kind string) (string, error) {
	if p.next[kind] == 0 {
		n, err := projections.NextKnowledgeNum(p.tx.Conn, p.work, kind, p.tx.Head())
		if err != nil {
			return "", err
		}
		p.next[kind] = n
	}
	id := fmt.Sprintf("%s-%d", events.KnowledgePrefix(kind), p.next[kind])
	p.next[kind]++
	return id, nil
}

// target finds the live item of one of kinds that raw (ID or ID=NOTE)
// names for the change op, and the note.
func (p *knowledgePlan) target(op, raw string, kinds ...string) (*projections.Knowledge, string, error) {
	flag := knowledgeFlag[op]
	id, note, _ := strings.Cut(raw, "=")
	id = strings.ToUpper(strings.TrimSpace(id))
	note = strings.TrimSpace(note)
	if id == "" {
		return nil, "", fault.New(fault.InvalidInput, "checkpoint: %s %q names no id", flag, raw).With("flag", flag)
	}
	if prev, dup := p.named[id]; dup {
		return nil, "", fault.New(fault.InvalidInput, "checkpoint: %s is named by both %s and %s", id, prev, flag).With("flag", flag).With("id", id)
	}
	p.named[id] = flag
	k, err := p.lookup(id)
	if err != nil {
		return nil, "", err
	}
	if k == nil {
		return nil, "", fault.New(fault.NotFound, "checkpoint: %s: %s has no loop, decision, fact or hypothesis %s", flag, p.work, id).
			With("flag", flag).With("id", id).WithHint("awr context hygiene --work %s", p.work)
	}
	if !k.Live() {
		return nil, "", fault.New(fault.InvalidTransition, "checkpoint: %s %s: it was %s at seq %d", flag, id, k.State, k.ClosedSeq).
			With("flag", flag).With("id", id).With("state", k.State)
	}
	if slices.Contains(kinds, k.Kind) {
		return k, note, nil
	}
	return nil, "", fault.New(fault.InvalidTransition, "checkpoint: %s %s: it is a %s, and %s applies to a %s", flag, id, k.Kind, flag, strings.Join(kinds, " or ")).
		With("flag", flag).With("id", id).With("kind", k.Kind)
}

// close plans a resolve, drop, confirm or retract of the item raw names.
func (p *knowledgePlan) close(op, raw string, kinds ...string) error {
	k, note, err := p.target(op, raw, kinds...)
	if err != nil {
		return err
	}
	if op == events.ChangeConfirm {
		p.changes = append(p.changes, events.KnowledgeChange{Op: op, ID: k.ID})
		// A confirmed hypothesis is a fact: the same text given as a
		// fact is that fact.
		hyp := events.KnowledgeHypothesis + "\x00" + projections.MatchText(k.Text)
		p.liveText[hyp] = slices.DeleteFunc(p.liveText[hyp], func(id string) bool { return id == k.ID })
		p.live(events.KnowledgeFact, k.Text, k.ID)
		return nil
	}
	p.changes = append(p.changes, events.KnowledgeChange{Op: op, ID: k.ID, Note: note})
	p.closing[k.ID] = true
	return nil
}

// supersede plans ID=TEXT: the item closed, superseded by a new one of
// its kind with TEXT.
func (p *knowledgePlan) supersede(raw string) error {
	if !strings.Contains(raw, "=") || strings.TrimSpace(raw[strings.Index(raw, "=")+1:]) == "" {
		return fault.New(fault.InvalidInput, "checkpoint: --supersede %q needs ID=TEXT, the text of the new version", raw).With("flag", "--supersede")
	}
	k, text, err := p.target(events.ChangeSupersede, raw, events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis)
	if err != nil {
		return err
	}
	id, err := p.newID(k.Kind)
	if err != nil {
		return err
	}
	p.changes = append(p.changes, events.KnowledgeChange{Op: events.ChangeSupersede, ID: k.ID, By: id})
	p.closing[k.ID] = true
	p.opens = append(p.opens, events.KnowledgeChange{Op: events.ChangeOpen, ID: id, Kind: k.Kind, Text: text, Supersedes: k.ID})
	// The new version is live: the same text given again is it.
	p.live(k.Kind, text, id)
	return nil
}

// open plans a new item of kind with text, unless the text (case,
// spacing and end punctuation aside) is that of a live item this
// checkpoint keeps: then it is that item.
func (p *knowledgePlan) open(kind, flag, text string) error {
	if projections.NormalizeText(text) == "" {
		return fault.New(fault.InvalidInput, "checkpoint: a %s is empty", flag).With("flag", flag)
	}
	key := kind + "\x00" + projections.MatchText(text)
	if slices.ContainsFunc(p.liveText[key], func(id string) bool { return !p.closing[id] }) {
		return nil
	}
	id, err := p.newID(kind)
	if err != nil {
		return err
	}
	p.liveText[key] = append(p.liveText[key], id)
	p.opens = append(p.opens, events.KnowledgeChange{Op: events.ChangeOpen, ID: id, Kind: kind, Text: strings.TrimSpace(text)})
	return nil
}
