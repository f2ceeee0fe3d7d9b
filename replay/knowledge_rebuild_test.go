package replay_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// knowledgeCounts counts, over every run of a property, the knowledge
// changes that were written, by flag, so the property can show it did
// not only meet refusals.
type knowledgeCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *knowledgeCounts) add(what string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[what]++
}

func (c *knowledgeCounts) get(what string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[what]
}

// missing lists the kinds of kinds no run has counted yet.
func (c *knowledgeCounts) missing(kinds []string) []string {
	var out []string
	for _, what := range kinds {
		if c.get(what) == 0 {
			out = append(out, what)
		}
	}
	return out
}

// knowledgeStep records a checkpoint that changes a work item's knowledge
// in every way a checkpoint can: it opens loops (some texts repeating an
// open loop, some only after normalizing space), decisions, facts and
// hypotheses, and resolves, drops, confirms, retracts or supersedes an
// item: most often one the work item has (live or closed), else an id it
// may not have.
func (w *world) knowledgeStep(counts *knowledgeCounts) {
	t := w.t
	sid := w.session()
	var items []projections.Knowledge
	require.NoError(t, w.env.Store.Read(w.ctx, func(r *events.Reader) error {
		s, err := projections.SessionAt(r.Conn, sid, r.Head)
		if err != nil || s == nil {
			return err
		}
		items, err = projections.KnowledgeAt(r.Conn, s.Work, r.Head)
		return err
	}))
	texts := []string{"x", "y", "z", " x ", "y  z", "y z"}
	f := commands.KnowledgeFlags{
		OpenLoops:  rapid.SliceOfN(rapid.SampledFrom(texts), 0, 3).Draw(t, "open"),
		Decisions:  rapid.SliceOfN(rapid.SampledFrom(texts), 0, 1).Draw(t, "decisions"),
		Facts:      rapid.SliceOfN(rapid.SampledFrom(texts), 0, 1).Draw(t, "facts"),
		Hypotheses: rapid.SliceOfN(rapid.SampledFrom(texts), 0, 1).Draw(t, "hypotheses"),
	}
	op := rapid.IntRange(0, 5).Draw(t, "change")
	// The id: most often one of the work item's items of a kind the
	// change applies to, live or closed; else any id, which may not exist.
	applies := [][]string{{events.KnowledgeLoop}, {events.KnowledgeLoop}, {events.KnowledgeHypothesis},
		{events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis}, {events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis}, nil}[op]
	var fit []string
	for _, k := range items {
		if slices.Contains(applies, k.Kind) {
			fit = append(fit, k.ID)
		}
	}
	id := fmt.Sprintf("%s-%d", rapid.SampledFrom([]string{"L", "D", "F", "H"}).Draw(t, "prefix"), rapid.IntRange(1, 4).Draw(t, "num"))
	if len(fit) > 0 && rapid.IntRange(0, 3).Draw(t, "known") > 0 {
		id = rapid.SampledFrom(fit).Draw(t, "item")
	}
	note := rapid.SampledFrom([]string{"", "=done", "=moot"}).Draw(t, "note")
	what := "none"
	switch op {
	case 0:
		f.ResolveLoops, what = []string{id + note}, "resolve"
	case 1:
		f.DropLoops, what = []string{id + note}, "drop"
	case 2:
		f.Confirm, what = []string{id}, "confirm"
	case 3:
		f.Retract, what = []string{id + note}, "retract"
	case 4:
		f.Supersede, what = []string{id + "=" + rapid.SampledFrom(texts).Draw(t, "by")}, "supersede"
	}
	_, err := commands.RecordCheckpoint(w.ctx, w.env, commands.CheckpointRequest{SessionID: sid, Agent: "a", Digest: "did", NextAction: "next", KnowledgeFlags: f})
	w.check(err)
	if err == nil {
		counts.add(what)
	}
}

// legacyCheckpoint appends, for an active session, a checkpoint in the
// form logs written before knowledge ids use: its loops as bare texts in
// open_loops, which open a loop unless one with the same text is open.
func (w *world) legacyCheckpoint(counts *knowledgeCounts) {
	loops := rapid.SliceOfN(rapid.SampledFrom([]string{"x", "y", "z", " x ", "w"}), 1, 3).Draw(w.t, "legacy")
	var active []string
	require.NoError(w.t, w.env.Store.Read(w.ctx, func(r *events.Reader) error {
		for _, id := range w.sessions {
			s, err := projections.SessionAt(r.Conn, id, r.Head)
			if err != nil {
				return err
			}
			if s != nil && s.Status == projections.SessionActive {
				active = append(active, id)
			}
		}
		return nil
	}))
	if len(active) == 0 {
		return
	}
	sid := rapid.SampledFrom(active).Draw(w.t, "legacy session")
	_, err := w.env.Store.Write(w.ctx, events.WriteOptions{Now: w.now, Entropy: w.env.Entropy, Actor: "a"}, func(tx *events.Tx) (any, error) {
		s, err := projections.SessionAt(tx.Conn, sid, tx.Head())
		if err != nil {
			return nil, err
		}
		cid := tx.NewID()
		_, err = tx.Append(events.NewEvent{Stream: "session/" + s.ID, ID: cid, Payload: events.CheckpointRecorded{
			CheckpointID: cid, SessionID: s.ID, Work: s.Work, Agent: "a", Digest: "legacy", NextAction: "next", OpenLoops: loops,
		}})
		return nil, err
	})
	require.NoError(w.t, err)
	counts.add("legacy")
}

// TestProperty_KnowledgeAndSearchRebuild: the knowledge and search
// projections a rebuild holds in memory (the open version of every search
// document, with the id the incremental path gives its row; the current
// version of every knowledge item, the highest number of each id prefix
// and each work item's items) leave tables equal, row for row and id for
// id, to those written event by event, for every way the commands change
// them, and for checkpoints in the bare-text form of older logs.
// Slow: every rapid check writes a project twice, event by event and in bulk.
func TestProperty_KnowledgeAndSearchRebuild(t *testing.T) {
	t.Parallel()
	var counts knowledgeCounts
	kinds := []string{"resolve", "drop", "confirm", "retract", "supersede", "legacy"}
	missing := func() []string { return counts.missing(kinds) }
	// Each round is a whole rapid check; a kind the random runs did not
	// write (fewer runs under -race) gets up to two more rounds before the
	// generator is blamed.
	for round := 0; round < 3 && (round == 0 || len(missing()) > 0); round++ {
		rapid.Check(t, knowledgeRebuildRun(&counts))
	}
	// The property is only worth its runs if the changes it draws were
	// written, not all refused.
	require.Empty(t, missing(), "no change of these kinds was written in any run")
}

// knowledgeRebuildRun is one rapid run of
// TestProperty_KnowledgeAndSearchRebuild: random commands, then the
// incremental tables compared with a rebuild's.
func knowledgeRebuildRun(counts *knowledgeCounts) func(*rapid.T) {
	return func(rt *rapid.T) {
		ctx := context.Background()
		w, st, cleanup := newWorld(rt, "know")
		defer cleanup()
		// A session to checkpoint in from the start; the steps start,
		// resume and end more.
		res, err := commands.StartSession(ctx, w.env, commands.StartRequest{Work: rapid.SampledFrom(w.keys).Draw(rt, "first work"), Agent: "a"})
		require.NoError(rt, err)
		w.sessions = append(w.sessions, res.Session.ID)
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 9).Draw(rt, "kstep") {
			case 0, 1, 2:
				w.knowledgeStep(counts)
			case 3:
				w.legacyCheckpoint(counts)
			default:
				w.step()
			}
		}
		_, _, mismatches, err := replay.CompareWithRebuild(ctx, st, nil)
		require.NoError(rt, err)
		require.Empty(rt, mismatches, "incremental projections differ from a rebuild")
	}
}

// TestProperty_RawKnowledgeRebuild appends checkpoints with any changes
// the fold accepts, bypassing the commands' planning (duplicate opens,
// changes to closed items, confirmed loops, ids of other kinds, a
// multibyte prefix, bare-text loops), and re-indexes that keep, drop or
// remove items on two source paths, on work items whose keys hold a
// colon or a NUL. Every write the incremental path refuses is left out;
// the log left must rebuild to the same tables.
// Slow: every rapid check writes a project twice, event by event and in bulk.
func TestProperty_RawKnowledgeRebuild(t *testing.T) {
	t.Parallel()
	var counts knowledgeCounts
	kinds := []string{"written", "refused", "index", events.ChangeResolve, events.ChangeDrop, events.ChangeConfirm, events.ChangeRetract, events.ChangeSupersede}
	missing := func() []string { return counts.missing(kinds) }
	// Each round is a whole rapid check; a kind the random runs did not
	// reach (a written drop needs a live item of the id drawn) gets up to
	// two more rounds before the generator is blamed.
	for round := 0; round < 3 && (round == 0 || len(missing()) > 0); round++ {
		rapid.Check(t, func(rt *rapid.T) {
			ctx := context.Background()
			dir, err := os.MkdirTemp("", "awr-rawknow-")
			require.NoError(rt, err)
			defer os.RemoveAll(dir)
			st := openProject(rt, dir)
			defer st.Close()
			now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			env := &commands.Env{Store: st, Now: func() time.Time { return now }, Entropy: rand.New(rand.NewSource(1))}
			_, err = commands.Init(ctx, env, commands.InitRequest{Name: "raw"})
			require.NoError(rt, err)
			works := []string{"K-1", "K:2", "K\x00a"}
			hash := 0
			index := func(path string, keys []string, removed bool) {
				hash++
				src := events.SourceIndexed{Path: path, Adapter: "yaml_ledger", ContentHash: fmt.Sprintf("h%d", hash), Removed: removed}
				for _, k := range keys {
					src.Items = append(src.Items, events.WorkItem{Key: k, Title: rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "title"), Status: "ready"})
				}
				_, err := commands.IndexSource(ctx, env, commands.IndexRequest{Source: src}, true)
				require.NoError(rt, err)
			}
			index("ledger.yaml", works, false)
			sessions := map[string]string{}
			for _, wk := range works {
				res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: wk, Agent: "a"})
				require.NoError(rt, err)
				sessions[wk] = res.Session.ID
			}
			ids := []string{"L-1", "L-2", "L-3", "D-1", "F-1", "H-1", "H-2", "Ł-1", "L-10"}
			kinds := []string{events.KnowledgeLoop, events.KnowledgeDecision, events.KnowledgeFact, events.KnowledgeHypothesis}
			ops := []string{events.ChangeOpen, events.ChangeResolve, events.ChangeDrop, events.ChangeConfirm, events.ChangeRetract, events.ChangeSupersede}
			texts := []string{"x", " x ", "y", "y  z", "y z"}
			steps := rapid.IntRange(1, 30).Draw(rt, "steps")
			for i := 0; i < steps; i++ {
				now = now.Add(time.Second)
				if rapid.IntRange(0, 5).Draw(rt, "what") == 0 {
					path := rapid.SampledFrom([]string{"ledger.yaml", "other.yaml"}).Draw(rt, "path")
					removed := rapid.IntRange(0, 3).Draw(rt, "removed") == 0
					var keys []string
					if !removed {
						keys = rapid.SliceOfNDistinct(rapid.SampledFrom(append(works, "K-3")), 0, 4, rapid.ID[string]).Draw(rt, "keys")
					}
					index(path, keys, removed)
					counts.add("index")
					continue
				}
				wk := rapid.SampledFrom(works).Draw(rt, "work")
				loops := rapid.SliceOfN(rapid.SampledFrom(texts), 0, 3).Draw(rt, "loops")
				var changes []events.KnowledgeChange
				for j, n := 0, rapid.IntRange(0, 3).Draw(rt, "changes"); j < n; j++ {
					changes = append(changes, events.KnowledgeChange{Op: rapid.SampledFrom(ops).Draw(rt, "op"), ID: rapid.SampledFrom(ids).Draw(rt, "id"),
						Kind: rapid.SampledFrom(kinds).Draw(rt, "kind"), Text: rapid.SampledFrom(texts).Draw(rt, "text"), Note: rapid.SampledFrom([]string{"", "n"}).Draw(rt, "note")})
				}
				_, err := st.Write(ctx, events.WriteOptions{Now: now, Entropy: env.Entropy, Actor: "a"}, func(tx *events.Tx) (any, error) {
					cid := tx.NewID()
					_, err := tx.Append(events.NewEvent{Stream: "session/" + sessions[wk], ID: cid, Payload: events.CheckpointRecorded{
						CheckpointID: cid, SessionID: sessions[wk], Work: wk, Agent: "a", Digest: "d", NextAction: "n", OpenLoops: loops, Changes: changes}})
					return nil, err
				})
				if err != nil {
					counts.add("refused")
					continue
				}
				counts.add("written")
				for _, c := range changes {
					if c.Op != events.ChangeOpen {
						counts.add(c.Op)
					}
				}
			}
			_, _, mismatches, err := replay.CompareWithRebuild(ctx, st, nil)
			require.NoError(rt, err)
			require.Empty(rt, mismatches, "incremental projections differ from a rebuild")
			// Two sources declaring the same keys, items dropped and
			// removed.
			requireRegisterAtHead(rt, st)
		})
	}
	require.Empty(t, missing(), "kinds no run reached")
}

// TestRebuild_SecondVersionAtOneSeq: a checkpoint that changes one
// knowledge item twice (opens and resolves it) cannot be written, since
// its second version would share the first's valid_from; in a log
// written without the projectors, a rebuild refuses it naming the seq,
// as the incremental path does, though the bulk path builds the unique
// indexes only at the end.
func TestRebuild_SecondVersionAtOneSeq(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	st := openProject(t, dir)
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	env := &commands.Env{Store: st, Now: func() time.Time { return now }, Entropy: rand.New(rand.NewSource(1))}
	_, err := commands.Init(ctx, env, commands.InitRequest{Name: "twice"})
	require.NoError(t, err)
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "ledger.yaml", Adapter: "yaml_ledger", ContentHash: "h1",
		Items: []events.WorkItem{{Key: "K-1", Title: "item", Status: "ready"}}}}, false)
	require.NoError(t, err)
	res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "K-1", Agent: "a"})
	require.NoError(t, err)
	sid := res.Session.ID
	twice := func(tx *events.Tx) (any, error) {
		cid := tx.NewID()
		_, err := tx.Append(events.NewEvent{Stream: "session/" + sid, ID: cid, Payload: events.CheckpointRecorded{
			CheckpointID: cid, SessionID: sid, Work: "K-1", Agent: "a", Digest: "d", NextAction: "n", Changes: []events.KnowledgeChange{
				{Op: events.ChangeOpen, ID: "L-1", Kind: events.KnowledgeLoop, Text: "x"},
				{Op: events.ChangeResolve, ID: "L-1", Note: "done"},
			}}})
		return nil, err
	}
	_, err = st.Write(ctx, events.WriteOptions{Now: now, Entropy: env.Entropy, Actor: "a"}, twice)
	require.Error(t, err, "the incremental path writes the second version")
	require.ErrorContains(t, err, "UNIQUE constraint failed")
	require.NoError(t, st.Close())

	bare, err := events.Open(ctx, events.DBPath(dir), events.Options{})
	require.NoError(t, err)
	w, err := bare.Write(ctx, events.WriteOptions{Now: now, Entropy: env.Entropy, Actor: "a"}, twice)
	require.NoError(t, err)
	require.NoError(t, bare.Close())

	// Opening with the projectors rebuilds them, in bulk mode.
	_, err = events.Open(ctx, events.DBPath(dir), events.Options{Projectors: projections.Projectors()})
	require.Error(t, err)
	require.ErrorContains(t, err, fmt.Sprintf("apply seq %d to projection knowledge", w.Revision))
	require.ErrorContains(t, err, "a second version")
	require.False(t, fault.Is(err, fault.VerifyFailed), "%v", err)
}

// TestKnowledge_WorkKeyWithNUL: a work item whose key holds a NUL (a YAML
// ledger accepts "K\0a") keeps its knowledge through the commands: a
// decision recorded and then retracted, a loop opened and resolved, and
// the tables equal a rebuild.
func TestKnowledge_WorkKeyWithNUL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := openProject(t, t.TempDir())
	defer st.Close()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	env := &commands.Env{Store: st, Now: func() time.Time { return now }, Entropy: rand.New(rand.NewSource(1))}
	_, err := commands.Init(ctx, env, commands.InitRequest{Name: "nul"})
	require.NoError(t, err)
	work := "K\x00a"
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "ledger.yaml", Adapter: "yaml_ledger", ContentHash: "h1",
		Items: []events.WorkItem{{Key: work, Title: "item", Status: "ready"}, {Key: "K", Title: "other", Status: "ready"}}}}, false)
	require.NoError(t, err)
	res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: work, Agent: "a"})
	require.NoError(t, err)
	checkpoint := func(f commands.KnowledgeFlags) *commands.CheckpointResult {
		now = now.Add(time.Second)
		out, err := commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: res.Session.ID, Agent: "a", Digest: "d", NextAction: "n", KnowledgeFlags: f})
		require.NoError(t, err)
		return out
	}
	checkpoint(commands.KnowledgeFlags{Decisions: []string{"use x"}, OpenLoops: []string{"why"}})
	out := checkpoint(commands.KnowledgeFlags{Retract: []string{"D-1=reversed"}, ResolveLoops: []string{"L-1=because"}})
	require.Empty(t, out.Knowledge.Decisions)
	require.Empty(t, out.Knowledge.OpenLoops)
	require.Len(t, out.Knowledge.Closed, 2)
	// A re-index that changes the item's title closes its old version.
	_, err = commands.IndexSource(ctx, env, commands.IndexRequest{Source: events.SourceIndexed{Path: "ledger.yaml", Adapter: "yaml_ledger", ContentHash: "h2",
		Items: []events.WorkItem{{Key: work, Title: "renamed", Status: "ready"}}}}, false)
	require.NoError(t, err)
	_, _, mismatches, err := replay.CompareWithRebuild(ctx, st, nil)
	require.NoError(t, err)
	require.Empty(t, mismatches, "incremental projections differ from a rebuild")
}
