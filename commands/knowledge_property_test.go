package commands_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// kItem is one loop, decision, fact or hypothesis of the model.
type kItem struct {
	ID, Kind, Text, State, Supersedes, SupersededBy string
}

func (k kItem) live() bool {
	return k.State == projections.KnowledgeOpen || k.State == projections.KnowledgeActive
}

// kModel is the knowledge of one work item as the rules say it should be:
// items in the order they were opened, and the highest number each id
// prefix has used.
type kModel struct {
	items []kItem
	last  map[string]int
}

func newKModel() *kModel { return &kModel{last: map[string]int{}} }

func (m *kModel) clone() *kModel {
	c := &kModel{items: slices.Clone(m.items), last: map[string]int{}}
	for p, n := range m.last {
		c.last[p] = n
	}
	return c
}

func (m *kModel) find(id string) *kItem {
	for i := range m.items {
		if m.items[i].ID == id {
			return &m.items[i]
		}
	}
	return nil
}

func (m *kModel) open(kind, text, supersedes string) string {
	p := events.KnowledgePrefix(kind)
	m.last[p]++
	id := fmt.Sprintf("%s-%d", p, m.last[p])
	state := projections.KnowledgeActive
	if kind == events.KnowledgeLoop {
		state = projections.KnowledgeOpen
	}
	m.items = append(m.items, kItem{ID: id, Kind: kind, Text: strings.TrimSpace(text), State: state, Supersedes: supersedes})
	return id
}

// live is the model's items in force, as KnowledgeStateAt files them.
func (m *kModel) live() []kItem {
	var out []kItem
	for _, kind := range []string{events.KnowledgeLoop, events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis} {
		for _, k := range m.items {
			if k.live() && k.Kind == kind {
				out = append(out, k)
			}
		}
	}
	sortItems(out)
	return out
}

// closed is the model's items no longer in force.
func (m *kModel) closed() []kItem {
	var out []kItem
	for _, k := range m.items {
		if !k.live() {
			out = append(out, k)
		}
	}
	sortItems(out)
	return out
}

// sortItems orders items by kind group and id, so the comparison does not
// depend on the projection's listing order.
func sortItems(items []kItem) {
	slices.SortStableFunc(items, func(a, b kItem) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// apply is the checkpoint's knowledge changes as the rules state them.
// It returns the model after the checkpoint, or the error codes the
// checkpoint may fail with (any of them: the command stops at its first).
// Ids name the items as they were before the checkpoint; an id named twice
// is InvalidInput, one never opened is NotFound, a closed item or the
// wrong kind is InvalidTransition. New versions of superseded items get
// their ids before new items of the same kind (an order the command
// fixes). A new text may be an item already in force (see restates).
func (m *kModel) apply(f commands.KnowledgeFlags) (*kModel, []fault.Code) {
	next := m.clone()
	var errs []fault.Code
	named := map[string]bool{}
	ref := func(raw string, kinds ...string) (*kItem, string) {
		id, note, _ := strings.Cut(raw, "=")
		id = strings.ToUpper(strings.TrimSpace(id))
		switch before := m.find(id); {
		case id == "" || named[id]:
			errs = append(errs, fault.InvalidInput)
		case before == nil:
			named[id] = true
			errs = append(errs, fault.NotFound)
		case !before.live() || !slices.Contains(kinds, before.Kind):
			named[id] = true
			errs = append(errs, fault.InvalidTransition)
		default:
			named[id] = true
			return next.find(id), strings.TrimSpace(note)
		}
		return nil, ""
	}
	closeAs := func(state string, raws []string, kinds ...string) {
		for _, raw := range raws {
			if k, _ := ref(raw, kinds...); k != nil {
				k.State = state
			}
		}
	}
	closeAs(projections.KnowledgeResolved, f.ResolveLoops, events.KnowledgeLoop)
	closeAs(projections.KnowledgeDropped, f.DropLoops, events.KnowledgeLoop)
	for _, raw := range f.Confirm {
		if k, _ := ref(raw, events.KnowledgeHypothesis); k != nil {
			k.Kind = events.KnowledgeFact
		}
	}
	closeAs(projections.KnowledgeRetracted, f.Retract, events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis)
	for _, raw := range f.Supersede {
		_, text, ok := strings.Cut(raw, "=")
		if !ok || strings.TrimSpace(text) == "" {
			errs = append(errs, fault.InvalidInput)
			continue
		}
		k, text := ref(raw, events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis)
		if k == nil {
			continue
		}
		k.State = projections.KnowledgeSuperseded
		old, kind := k.ID, k.Kind
		// open grows next.items, which k points into: find old again.
		by := next.open(kind, text, old)
		next.find(old).SupersededBy = by
	}
	for _, add := range []struct {
		kind  string
		texts []string
	}{
		{events.KnowledgeLoop, f.OpenLoops},
		{events.KnowledgeDecision, f.Decisions},
		{events.KnowledgeFact, f.Facts},
		{events.KnowledgeHypothesis, f.Hypotheses},
	} {
		for _, text := range add.texts {
			if projections.NormalizeText(text) == "" {
				errs = append(errs, fault.InvalidInput)
				continue
			}
			if !m.restates(next, named, add.kind, projections.MatchText(text)) {
				next.open(add.kind, text, "")
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return next, nil
}

// matchAfterChanges picks the rule the model holds a new text to. True is
// the rule as stated: a text equal to that of any item of the same kind in
// force after the checkpoint's other changes is that item. The command
// does not meet it today, so the model runs with false, the rule as
// built: a text matches an item in force before the checkpoint that the
// checkpoint does not name (where several share the text, the one with
// the highest number) or an item an earlier flag of the checkpoint
// opened; a new version a --supersede opens, and a hypothesis a --confirm
// makes a fact, match nothing in the same checkpoint. Two checkpoints
// show the difference: --fact A, then --supersede F-1=B --fact B leaves
// both F-2 and F-3 in force with the text B.
const matchAfterChanges = true

// restates reports whether a new text of kind, whose match key
// (projections.MatchText) is norm, is an
// item already in force: m is the knowledge before the checkpoint, next
// after its changes so far, named the ids the checkpoint names.
func (m *kModel) restates(next *kModel, named map[string]bool, kind, norm string) bool {
	same := func(k kItem) bool { return k.live() && k.Kind == kind && projections.MatchText(k.Text) == norm }
	if matchAfterChanges {
		return slices.ContainsFunc(next.items, same)
	}
	var before *kItem
	for i, k := range m.items {
		if same(k) && (before == nil || idNum(k.ID) > idNum(before.ID)) {
			before = &m.items[i]
		}
	}
	if before != nil && !named[before.ID] {
		return true
	}
	for _, k := range next.items[len(m.items):] {
		if same(k) && k.Supersedes == "" {
			return true
		}
	}
	return false
}

func idNum(id string) int {
	_, n, _ := strings.Cut(id, "-")
	v, _ := strconv.Atoi(n)
	return v
}

// knowledgeTexts is a small pool, so that texts repeat (some only up to
// white space, case or end punctuation) and empty ones occur.
var knowledgeTexts = []string{"wire the parser", "wire  the parser ", "Wire the parser.", "flaky login test", "use sqlite", "Use SQLite!", "cache is cold", "x=1 holds", "...", "", "   "}

// drawRef picks an id for a change: mostly one that applies (a live item
// of a kind the change takes), else any item ever opened, a number past
// the last (perhaps the id a new item of this checkpoint gets), or
// garbage; sometimes lower case.
func drawRef(t *rapid.T, m *kModel, label string, kinds ...string) string {
	var fit, all []string
	for _, k := range m.items {
		all = append(all, k.ID)
		if k.live() && slices.Contains(kinds, k.Kind) {
			fit = append(fit, k.ID)
		}
	}
	var id string
	switch c := rapid.IntRange(0, 9).Draw(t, label+"_how"); {
	case c < 6 && len(fit) > 0:
		id = rapid.SampledFrom(fit).Draw(t, label+"_fit")
	case c < 8 && len(all) > 0:
		id = rapid.SampledFrom(all).Draw(t, label+"_any")
	case c < 9:
		p := rapid.SampledFrom([]string{"L", "D", "F", "H"}).Draw(t, label+"_prefix")
		id = fmt.Sprintf("%s-%d", p, m.last[p]+rapid.IntRange(1, 2).Draw(t, label+"_past"))
	default:
		id = rapid.SampledFrom([]string{"", " ", "X-1", "L-0"}).Draw(t, label+"_junk")
	}
	if rapid.IntRange(0, 7).Draw(t, label+"_lower") == 0 {
		id = strings.ToLower(id)
	}
	return id
}

// drawFlags draws up to four knowledge operations for one checkpoint.
func drawFlags(t *rapid.T, m *kModel) commands.KnowledgeFlags {
	var f commands.KnowledgeFlags
	text := func(label string) string { return rapid.SampledFrom(knowledgeTexts).Draw(t, label) }
	note := func(label string) string {
		return rapid.SampledFrom([]string{"", "=", "=done", "= no longer needed "}).Draw(t, label)
	}
	loop, claims := []string{events.KnowledgeLoop}, []string{events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis}
	n := rapid.IntRange(0, 4).Draw(t, "ops")
	for i := 0; i < n; i++ {
		l := fmt.Sprintf("op%d", i)
		switch rapid.IntRange(0, 9).Draw(t, l) {
		case 0, 1:
			f.OpenLoops = append(f.OpenLoops, text(l+"_text"))
		case 2:
			f.ResolveLoops = append(f.ResolveLoops, drawRef(t, m, l, loop...)+note(l+"_note"))
		case 3:
			f.DropLoops = append(f.DropLoops, drawRef(t, m, l, loop...)+note(l+"_note"))
		case 4:
			f.Decisions = append(f.Decisions, text(l+"_text"))
		case 5:
			f.Facts = append(f.Facts, text(l+"_text"))
		case 6:
			f.Hypotheses = append(f.Hypotheses, text(l+"_text"))
		case 7:
			f.Confirm = append(f.Confirm, drawRef(t, m, l, events.KnowledgeHypothesis))
		case 8:
			f.Retract = append(f.Retract, drawRef(t, m, l, claims...)+note(l+"_note"))
		case 9:
			sep := rapid.SampledFrom([]string{"=", "=", "=", ""}).Draw(t, l+"_sep")
			f.Supersede = append(f.Supersede, drawRef(t, m, l, claims...)+sep+text(l+"_text"))
		}
	}
	return f
}

// itemsOf lists what the projection holds, in the model's terms.
func itemsOf(lists ...[]projections.Knowledge) []kItem {
	var out []kItem
	for _, l := range lists {
		for _, k := range l {
			out = append(out, kItem{ID: k.ID, Kind: k.Kind, Text: k.Text, State: k.State, Supersedes: k.Supersedes, SupersededBy: k.SupersededBy})
		}
	}
	sortItems(out)
	return out
}

// TestKnowledge_MatchesModel drives random checkpoints, valid and not,
// across a chain of sessions on one work item, and holds the knowledge
// projection to a model of the rules: a checkpoint the model refuses
// fails with one of the model's codes and writes nothing; one it accepts
// succeeds and leaves exactly the model's items, in force and closed; and
// every earlier checkpoint's revision still reads as the model was then.
func TestKnowledge_MatchesModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// One project for every run, each run on a work item of its own: a
	// project costs far more to open than a run's checkpoints, and
	// knowledge belongs to its work item, so runs do not see each other.
	te := newTestEnv(t)
	runs := 0
	rapid.Check(t, func(rt *rapid.T) {
		runs++
		work := fmt.Sprintf("P-%d", runs)
		_, err := commands.IndexSource(ctx, te.Env, commands.IndexRequest{Source: events.SourceIndexed{
			Path: work + ".yaml", Adapter: "yaml_ledger", Role: "tasks", ContentHash: work,
			Items: []events.WorkItem{{Key: work, Title: "property run", Status: "planned", NextAction: "checkpoint"}},
		}}, false)
		require.NoError(rt, err)
		start, err := commands.StartSession(ctx, te.Env, commands.StartRequest{Work: work, Agent: "a1", Claim: true})
		require.NoError(rt, err)
		session, sessions := start.Session.ID, 1
		maxSessions := rapid.IntRange(1, 3).Draw(rt, "sessions")
		type moment struct {
			seq   int64
			model *kModel
		}
		var history []moment
		head := func() int64 {
			var h int64
			require.NoError(rt, te.Store.Read(ctx, func(r *events.Reader) error { h = r.Head; return nil }))
			return h
		}
		read := func(rev, since int64) *projections.KnowledgeState {
			var st *projections.KnowledgeState
			require.NoError(rt, te.Store.Read(ctx, func(r *events.Reader) error {
				var err error
				st, err = projections.KnowledgeStateAt(r.Conn, work, rev, since)
				return err
			}))
			return st
		}
		model := newKModel()
		steps := rapid.IntRange(1, 15).Draw(rt, "checkpoints")
		for i := 0; i < steps; i++ {
			if sessions < maxSessions && rapid.IntRange(0, 3).Draw(rt, fmt.Sprintf("resume%d", i)) == 0 {
				res, err := commands.ResumeSession(ctx, te.Env, commands.ResumeRequest{FromSession: session, Agent: fmt.Sprintf("a%d", sessions+1)})
				require.NoError(rt, err)
				session = res.Session.ID
				sessions++
			}
			flags := drawFlags(rt, model)
			want, codes := model.apply(flags)
			before := head()
			_, err := commands.RecordCheckpoint(ctx, te.Env, commands.CheckpointRequest{SessionID: session, Agent: "a", Digest: "d", NextAction: "n", KnowledgeFlags: flags})
			if codes != nil {
				require.Error(rt, err, "the model refuses %+v (%v) on %+v", flags, codes, model.items)
				require.Contains(rt, codes, fault.CodeOf(err), "checkpoint %+v on %+v: %v", flags, model.items, err)
				require.Equal(rt, before, head(), "a refused checkpoint wrote events")
				continue
			}
			require.NoError(rt, err, "the model accepts %+v on %+v", flags, model.items)
			model = want
			seq := head()
			st := read(seq, seq)
			require.Empty(rt, st.Closed, "nothing closed after the head")
			require.Equal(rt, model.live(), itemsOf(st.OpenLoops, st.Decisions, st.Facts, st.Hypotheses), "in force after %+v", flags)
			require.Equal(rt, model.closed(), itemsOf(read(seq, 0).Closed), "closed after %+v", flags)
			history = append(history, moment{seq, model})
		}
		for _, h := range history {
			st := read(h.seq, 0)
			require.Equal(rt, h.model.live(), itemsOf(st.OpenLoops, st.Decisions, st.Facts, st.Hypotheses), "in force at seq %d", h.seq)
			require.Equal(rt, h.model.closed(), itemsOf(st.Closed), "closed at seq %d", h.seq)
		}
	})
}
