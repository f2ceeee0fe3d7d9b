package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// roundTrip exports st, imports the export into a new project, verifies
// the copy (chain, domain, projections against a rebuild) and checks that
// its projections equal the original's. It returns the export.
func roundTrip(t *testing.T, st *events.Store) []byte {
	t.Helper()
	ctx := context.Background()
	var buf bytes.Buffer
	exp, err := replay.Export(ctx, st, &buf, -1)
	require.NoError(t, err)
	dst := openProject(t, t.TempDir())
	defer dst.Close()
	imp, err := replay.Import(ctx, dst, bytes.NewReader(buf.Bytes()), "export.jsonl")
	require.NoError(t, err)
	require.Equal(t, exp.ProjectRevision, imp.ProjectRevision)
	require.Equal(t, exp.HeadHash, imp.HeadHash)
	v, err := replay.Verify(ctx, dst, nil)
	require.NoError(t, err)
	require.True(t, v.OK, "verify of the import: %s (seq %d) %v", v.Problem, v.FirstBadSeq, v.Mismatches)
	orig, err := replay.Verify(ctx, st, nil)
	require.NoError(t, err)
	require.True(t, orig.OK, "verify of the original: %s (seq %d) %v", orig.Problem, orig.FirstBadSeq, orig.Mismatches)
	require.Equal(t, orig.Projections, v.Projections, "the import's projections differ from the original's")
	return buf.Bytes()
}

// newEnv opens a project in dir with a fixed clock and seeded entropy,
// initialized.
func newEnv(t *testing.T, dir string) *commands.Env {
	t.Helper()
	st := openProject(t, dir)
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	env := &commands.Env{Store: st, Now: func() time.Time { now = now.Add(time.Second); return now }, Entropy: rand.New(rand.NewSource(7))}
	_, err := commands.Init(context.Background(), env, commands.InitRequest{Name: "roundtrip"})
	require.NoError(t, err)
	return env
}

// padded is a source_indexed whose one goal's summary is pad bytes long.
func padded(pad int) events.SourceIndexed {
	return events.SourceIndexed{Path: "big.md", Adapter: "goals_markdown", ContentHash: "sha256:big",
		Goals: []events.Goal{{Key: "G-1", Title: "big", Summary: strings.Repeat("lorem ipsum ", pad/12+1)[:pad], Source: events.SourceRef{Path: "big.md", LineStart: 1, LineEnd: 1}}}}
}

// TestRoundTrip_EventCap: an event whose export line is exactly
// events.MaxEventBytes is written, exported, imported and verified; one
// byte more is refused by the writer (nothing written) and, as a line, by
// import. The event at the cap is written, exported and imported only in
// the long form (AWR_LONG=1): two minutes on 2 busy cores.
func TestRoundTrip_EventCap(t *testing.T) {
	ctx := context.Background()
	env := newEnv(t, t.TempDir())
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	opts := func() events.WriteOptions {
		return events.WriteOptions{Now: at, Entropy: rand.New(rand.NewSource(1)), Actor: "test"}
	}
	// Seal (the writer's own step, without storing) measures the line an
	// event of a given padding makes; the padding is ASCII, so the line
	// grows byte for byte with it.
	var head events.Head
	require.NoError(t, env.Store.Read(ctx, func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, r.Head, r.Head, func(e *events.Event) error {
			head = events.Head{Revision: e.Seq, Hash: e.Hash, OccurredAt: e.OccurredAt}
			return nil
		})
	}))
	sizeOf := func(pad int) int {
		e, err := events.Seal(events.NewEvent{Stream: "source/big.md", Payload: padded(pad)}, opts(), head, true, func(string) (int64, error) { return 0, nil })
		require.NoError(t, err)
		return events.LineSize(e)
	}
	pad := 1000 + events.MaxEventBytes - sizeOf(1000)
	appendPadded := func(pad int) error {
		_, err := env.Store.Write(ctx, opts(), func(tx *events.Tx) (any, error) {
			return tx.Append(events.NewEvent{Stream: "source/big.md", Payload: padded(pad)})
		})
		return err
	}

	t.Run("OverCap", func(t *testing.T) {
		err := appendPadded(pad + 1)
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		require.EqualValues(t, events.MaxEventBytes+1, fault.As(err).Details["bytes"])
		require.EqualValues(t, events.MaxEventBytes, fault.As(err).Details["max"])
		require.Contains(t, err.Error(), "more than the 67108864 an event may be")
		require.Equal(t, head.Revision, headOf(t, env.Store), "a refused event leaves the log as it was")
	})
	t.Run("AtCap", func(t *testing.T) {
		if os.Getenv("AWR_LONG") == "" {
			t.Skip("the long form (AWR_LONG=1) writes, exports and imports the event of 64 MiB")
		}
		require.NoError(t, appendPadded(pad))
		var stored int
		require.NoError(t, env.Store.Read(ctx, func(r *events.Reader) error {
			return events.ScanEvents(r.Conn, r.Head, r.Head, func(e *events.Event) error { stored = events.LineSize(e); return nil })
		}))
		require.Equal(t, events.MaxEventBytes, stored)
		export := roundTrip(t, env.Store)
		lines := bytes.Split(bytes.TrimRight(export, "\n"), []byte("\n"))
		require.Len(t, lines[len(lines)-1], events.MaxEventBytes, "the export line is the size the writer measured")

		// The same event one byte longer as a line (a space JSON allows
		// after the opening brace) is over the cap import reads.
		last := lines[len(lines)-1]
		long := append(append([]byte("{ "), last[1:]...), '\n')
		over := append(bytes.Join(lines[:len(lines)-1], []byte("\n")), '\n')
		over = append(over, long...)
		dst := openProject(t, t.TempDir())
		defer dst.Close()
		_, err := replay.Import(ctx, dst, bytes.NewReader(over), "over.jsonl")
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		require.Contains(t, err.Error(), fmt.Sprintf("over.jsonl:%d: line longer than %d bytes", len(lines), events.MaxEventBytes))
		require.Zero(t, headOf(t, dst), "a refused import writes nothing")
	})
}

func headOf(t *testing.T, st *events.Store) int64 {
	t.Helper()
	var head int64
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error { head = r.Head; return nil }))
	return head
}

// checklist writes a markdown_checklist of n tasks whose lines are padded
// so that the file is exactly size bytes, and returns its manifest entry.
func checklist(t *testing.T, dir string, n, size int, edit func(i int) string) intake.ManifestSource {
	t.Helper()
	var b strings.Builder
	per := size / n
	for i := 1; i <= n; i++ {
		line := fmt.Sprintf("- [ ] T-%06d: task %d %s", i, i, edit(i))
		want := per
		if i == n {
			want = size - b.Len()
		}
		fill := want - len(line) - 1
		require.GreaterOrEqual(t, fill, 0)
		b.WriteString(line + strings.Repeat("x", fill) + "\n")
	}
	require.Equal(t, size, b.Len())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tasks.md"), []byte(b.String()), 0o644))
	return intake.ManifestSource{Path: "tasks.md", Adapter: "markdown_checklist", Role: "tasks"}
}

// sourceEvents returns the source_indexed events of the log after seq
// from: how many and their payload bytes.
func sourceEvents(t *testing.T, st *events.Store, from int64) (n int, bytes int) {
	t.Helper()
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		return events.ScanEvents(r.Conn, from+1, r.Head, func(e *events.Event) error {
			if e.Kind == events.KindSourceIndexed {
				n++
				bytes += len(e.Payload)
				require.LessOrEqual(t, events.LineSize(e), events.MaxEventBytes)
			}
			return nil
		})
	}))
	return n, bytes
}

// TestRoundTrip_SourceCap: a source file one byte under the 16 MiB a
// source may have is indexed in parts (its parsed items are more than one
// event may hold), then edited and reindexed as a delta; the log exports,
// imports and verifies with the same projections, and the work items
// equal those of a project that indexed the edited file once. One byte
// over the cap, the source is recorded as unreadable, and that log round
// trips too. The source under the cap is indexed only in the long form
// (AWR_LONG=1): over a minute on 2 busy cores.
func TestRoundTrip_SourceCap(t *testing.T) {
	ctx := context.Background()
	const size = 16<<20 - 1
	// 2000 lines of about 8 KiB: each task's title is its whole line, so
	// the parsed items are more than MaxPartBytes and the index is split.
	const n = 2000
	same := func(int) string { return "" }
	edited := func(i int) string {
		if i == 1234 {
			return "(P1) edited"
		}
		return ""
	}

	t.Run("UnderCap", func(t *testing.T) {
		if os.Getenv("AWR_LONG") == "" {
			t.Skip("the long form (AWR_LONG=1) indexes the source of 16 MiB in parts")
		}
		dir := t.TempDir()
		env := newEnv(t, dir)
		ms := checklist(t, dir, n, size, same)
		si, missing := intake.Read(dir, ms)
		require.False(t, missing)
		require.Len(t, si.Items, n)
		require.Empty(t, si.Issues)
		before := headOf(t, env.Store)
		res, err := commands.IndexSources(ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{si}})
		require.NoError(t, err)
		require.Len(t, res.Indexed, 1)
		parts, whole := sourceEvents(t, env.Store, before)
		require.Greater(t, parts, 1, "an index of %d bytes is split", whole)
		require.Equal(t, parts, res.Indexed[0].Parts)

		// Edit one task and reindex: one delta event, of about one task.
		ms = checklist(t, dir, n, size, edited)
		si2, _ := intake.Read(dir, ms)
		mid := headOf(t, env.Store)
		_, err = commands.IndexSources(ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{si2}})
		require.NoError(t, err)
		count, delta := sourceEvents(t, env.Store, mid)
		require.Equal(t, 1, count)
		require.Less(t, delta, 3*(size/n), "a reindex after one edit stores about one task (%d bytes), not the file (%d)", delta, whole)

		roundTrip(t, env.Store)

		// The same edited file indexed at once gives the same items.
		fresh := t.TempDir()
		env2 := newEnv(t, fresh)
		_, err = commands.IndexSources(ctx, env2, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{si2}})
		require.NoError(t, err)
		require.Equal(t, workItems(t, env2.Store), workItems(t, env.Store))
		require.Equal(t, "P1", itemAt(t, env.Store, "T-001234", -1).Priority)
		require.Equal(t, "", itemAt(t, env.Store, "T-001234", mid).Priority, "the revision before the edit still reads the old item")
	})
	t.Run("OverCap", func(t *testing.T) {
		dir := t.TempDir()
		env := newEnv(t, dir)
		ms := checklist(t, dir, n, size+2, same)
		si, missing := intake.Read(dir, ms)
		require.False(t, missing)
		require.Empty(t, si.Items)
		require.Len(t, si.Issues, 1)
		require.Equal(t, "unreadable", si.Issues[0].Code)
		require.Contains(t, si.Issues[0].Message, fmt.Sprintf("%d bytes is more than the %d a source may have", size+2, 16<<20))
		_, err := commands.IndexSources(ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{si}})
		require.NoError(t, err)
		roundTrip(t, env.Store)
	})
}

// workItems returns every work item at the head as JSON, by key.
func workItems(t *testing.T, st *events.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		items, err := projections.WorkItemsAt(r.Conn, r.Head, true)
		for _, it := range items {
			raw, err := json.Marshal(it)
			require.NoError(t, err)
			out[it.Key] = string(raw)
		}
		return err
	}))
	return out
}

// itemAt returns work item key as of rev (the head for rev < 0).
func itemAt(t *testing.T, st *events.Store, key string, rev int64) events.WorkItem {
	t.Helper()
	var out []projections.WorkItem
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		if rev < 0 {
			rev = r.Head
		}
		var err error
		out, err = projections.WorkItemAt(r.Conn, key, rev)
		return err
	}))
	require.Len(t, out, 1)
	return out[0].WorkItem
}

// TestRoundTrip_CheckpointCap: a checkpoint whose texts total exactly
// commands.MaxCheckpointBytes is recorded, its work item's packet compiles
// at the largest budget, and the log round trips; one byte more is
// refused with InvalidInput naming the cap, and nothing is written.
func TestRoundTrip_CheckpointCap(t *testing.T) {
	ctx := context.Background()
	env := newEnv(t, t.TempDir())
	_, err := commands.IndexSources(ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{{
		Path: "tasks.md", Adapter: "markdown_checklist", ContentHash: "sha256:t",
		Items: []events.WorkItem{{Key: "T-1", Title: "one", Status: "planned", Source: events.SourceRef{Path: "tasks.md", LineStart: 1, LineEnd: 1}}},
	}}})
	require.NoError(t, err)
	s, err := commands.StartSession(ctx, env, commands.StartRequest{Work: "T-1", Agent: "a", Claim: true})
	require.NoError(t, err)
	// Dense text: digits and punctuation make o200k_base tokens of one or
	// two bytes; control characters are escaped in the packet.
	dense := func(n int) string {
		var b strings.Builder
		const alphabet = "0123456789!#%&()*+,-./:;<=>?@[]^_{|}~\x01\x02"
		rng := rand.New(rand.NewSource(int64(n)))
		for b.Len() < n {
			b.WriteByte(alphabet[rng.Intn(len(alphabet))])
		}
		return b.String()
	}
	request := func(total int) commands.CheckpointRequest {
		req := commands.CheckpointRequest{SessionID: s.Session.ID, Agent: "a", Digest: "did it", NextAction: "next"}
		rest := total - len(req.Digest) - len(req.NextAction)
		for rest > 0 {
			n := min(rest, commands.MaxTextBytes)
			req.OpenLoops = append(req.OpenLoops, dense(n))
			rest -= n
		}
		return req
	}
	t.Run("OverCap", func(t *testing.T) {
		before := headOf(t, env.Store)
		_, err := commands.RecordCheckpoint(ctx, env, request(commands.MaxCheckpointBytes+1))
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		f := fault.As(err)
		require.EqualValues(t, commands.MaxCheckpointBytes+1, f.Details["bytes"])
		require.EqualValues(t, commands.MaxCheckpointBytes, f.Details["max"])
		require.Equal(t, "awr session checkpoint --help", f.Hint)
		require.Equal(t, before, headOf(t, env.Store))
	})
	t.Run("AtCap", func(t *testing.T) {
		_, err := commands.RecordCheckpoint(ctx, env, request(commands.MaxCheckpointBytes))
		require.NoError(t, err)
		budget := commands.MaxBudget
		res, err := commands.CompileContext(ctx, env, commands.CompileRequest{Work: "T-1", Session: s.Session.ID, Budget: &budget})
		if err != nil {
			// A packet without acceptance criteria is incomplete, and
			// still compiled; never over budget.
			require.True(t, fault.Is(err, fault.ContextIncomplete), "the packet of a work item with a checkpoint at the cap compiles within the largest budget: %v", err)
		}
		require.NotNil(t, res)
		p := res.WorkContext
		t.Logf("a checkpoint of %d bytes: the packet's required facts take %d tokens of %d", commands.MaxCheckpointBytes, p.RequiredTokens, budget)
		require.LessOrEqual(t, p.TokenEstimate, budget)
		require.Greater(t, p.RequiredTokens, workcontext.DefaultBudget, "the checkpoint's texts are in the packet")
		roundTrip(t, env.Store)
	})
	// The loops stay open after the checkpoint that opened them: a second
	// checkpoint that would add to what the packet must carry whole is
	// refused, one that drops a loop that died to make room is not.
	t.Run("OpenKnowledgeOverCap", func(t *testing.T) {
		before := headOf(t, env.Store)
		req := commands.CheckpointRequest{SessionID: s.Session.ID, Agent: "a", Digest: "again", NextAction: "next"}
		// Three more loops, each under the cap of a text and together
		// under the cap of a checkpoint.
		for n := range 3 {
			req.OpenLoops = append(req.OpenLoops, dense(commands.MaxTextBytes-1-n))
		}
		_, err := commands.RecordCheckpoint(ctx, env, req)
		require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
		f := fault.As(err)
		require.Greater(t, f.Details["bytes"], commands.MaxCheckpointBytes)
		require.Equal(t, "awr context hygiene --work T-1", f.Hint)
		require.Equal(t, before, headOf(t, env.Store), "nothing written")
		req.DropLoops = []string{"L-1=died", "L-2=died"}
		_, err = commands.RecordCheckpoint(ctx, env, req)
		require.NoError(t, err)
		budget := commands.MaxBudget
		res, err := commands.CompileContext(ctx, env, commands.CompileRequest{Work: "T-1", Session: s.Session.ID, Budget: &budget})
		if err != nil {
			require.True(t, fault.Is(err, fault.ContextIncomplete), "%v", err)
		}
		require.LessOrEqual(t, res.WorkContext.TokenEstimate, budget)
	})
}

// version draws the next content of a source from prev (nil for the
// first): a few edits (an item changed, added or deleted, a goal or rule
// changed, added or deleted), so that most elements stay as they were and
// keys repeat within the source; the elements' references carry the new
// content hash (or, in some versions, none, as a caller that sets no
// reference hash).
func version(rng *rand.Rand, k int, prev *events.SourceIndexed) events.SourceIndexed {
	hash := fmt.Sprintf("sha256:v%d", k)
	si := events.SourceIndexed{Path: "tasks.md", Adapter: "markdown_checklist", Role: "tasks", ContentHash: hash, Size: int64(k)}
	if prev != nil {
		si.Items = append(si.Items, prev.Items...)
		si.Goals = append(si.Goals, prev.Goals...)
		si.Rules = append(si.Rules, prev.Rules...)
	}
	newItem := func() events.WorkItem {
		return events.WorkItem{Key: fmt.Sprintf("T-%d", 1+rng.Intn(5)), Title: []string{"a", "b", "c"}[rng.Intn(3)],
			Status: []string{"planned", "completed"}[rng.Intn(2)], Acceptance: []string{"x", "y"}[:rng.Intn(3)],
			Source: events.SourceRef{Path: "tasks.md", LineStart: rng.Intn(20), LineEnd: 20}}
	}
	edits := 1 + rng.Intn(3)
	if prev == nil {
		edits = 8
	}
	for e := 0; e < edits; e++ {
		switch op := rng.Intn(8); {
		case op < 2 || len(si.Items) == 0:
			at := rng.Intn(len(si.Items) + 1)
			si.Items = append(si.Items[:at], append([]events.WorkItem{newItem()}, si.Items[at:]...)...)
		case op < 4:
			at := rng.Intn(len(si.Items))
			si.Items = append(si.Items[:at:at], si.Items[at+1:]...)
		case op < 6:
			at := rng.Intn(len(si.Items))
			it := si.Items[at]
			it.Title += "!"
			si.Items = append(si.Items[:at:at], append([]events.WorkItem{it}, si.Items[at+1:]...)...)
		case op == 6:
			si.Goals = append(si.Goals[:0:0], si.Goals...)
			if len(si.Goals) > 0 && rng.Intn(2) == 0 {
				si.Goals = si.Goals[1:]
			} else {
				si.Goals = append(si.Goals, events.Goal{Key: fmt.Sprintf("G-%d", 1+rng.Intn(2)), Title: []string{"g", "h"}[rng.Intn(2)], Source: events.SourceRef{Path: "tasks.md", LineStart: 30}})
			}
		default:
			si.Rules = append(si.Rules[:0:0], si.Rules...)
			if len(si.Rules) > 0 && rng.Intn(2) == 0 {
				si.Rules = si.Rules[1:]
			} else {
				si.Rules = append(si.Rules, events.Rule{Key: fmt.Sprintf("R-%d", 1+rng.Intn(2)), Text: "r", Strength: []string{"hard", "soft"}[rng.Intn(2)], Source: events.SourceRef{Path: "tasks.md", LineStart: 40}})
			}
		}
	}
	ref := ""
	if k%4 != 3 {
		ref = hash
	}
	for i := range si.Items {
		si.Items[i].Source.ContentHash = ref
	}
	for i := range si.Goals {
		si.Goals[i].Source.ContentHash = ref
	}
	for i := range si.Rules {
		si.Rules[i].Source.ContentHash = ref
	}
	if rng.Intn(3) == 0 {
		si.Issues = []events.SourceIssue{{Code: "duplicate_key", Message: "m", Path: "tasks.md", Line: 1}}
	}
	return si
}

// sourceState is what the work projection says of the source at rev:
// its items, goals and rules and its row (without when and at which seq
// it was indexed, which differ between two logs).
func sourceState(t *testing.T, st *events.Store, rev int64) string {
	t.Helper()
	var out []any
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		if rev < 0 {
			rev = r.Head
		}
		items, err := projections.WorkItemsAt(r.Conn, rev, false)
		if err != nil {
			return err
		}
		goals, err := projections.GoalsAt(r.Conn, rev)
		if err != nil {
			return err
		}
		rules, err := projections.RulesAt(r.Conn, rev)
		if err != nil {
			return err
		}
		srcs, err := projections.SourcesAt(r.Conn, rev, false)
		if err != nil {
			return err
		}
		for i := range srcs {
			srcs[i].IndexedAt, srcs[i].Revision = 0, 0
		}
		// What search finds of the items: each key's first declaration.
		hits, err := projections.SearchAt(r.Conn, rev, "a OR b OR c OR x OR y", projections.SearchWork, 100)
		var found []string
		for _, h := range hits {
			found = append(found, h.Ref+" "+h.Title+" "+h.State)
		}
		sort.Strings(found)
		out = append(out, items, goals, rules, srcs, found)
		return err
	}))
	raw, err := json.Marshal(out)
	require.NoError(t, err)
	return string(raw)
}

// TestRoundTrip_DeltaIndex: a source reindexed version after version
// (deltas) reads, at the revision of each version, exactly what a project
// that indexed that version alone reads (the whole index a log held before
// deltas); the log verifies (its projections equal a rebuild), and
// exports and imports with the same projections.
func TestRoundTrip_DeltaIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			env := newEnv(t, t.TempDir())
			var revs []int64
			var versions []events.SourceIndexed
			deltas := 0
			var prev *events.SourceIndexed
			for k := 0; k < 8; k++ {
				v := version(rng, k, prev)
				prev = &v
				before := headOf(t, env.Store)
				res, err := commands.IndexSources(ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{v}})
				require.NoError(t, err)
				require.Len(t, res.Indexed, 1)
				require.NoError(t, env.Store.Read(ctx, func(r *events.Reader) error {
					return events.ScanEvents(r.Conn, before+1, r.Head, func(e *events.Event) error {
						pl, err := events.Decode(e)
						if err == nil && pl.(*events.SourceIndexed).Delta {
							deltas++
						}
						return err
					})
				}))
				revs = append(revs, headOf(t, env.Store))
				versions = append(versions, v)
			}
			require.NotZero(t, deltas, "reindexes are deltas")
			for k, v := range versions {
				whole := newEnv(t, t.TempDir())
				_, err := whole.Store.Write(ctx, events.WriteOptions{Now: time.Date(2026, 12, 1, 9, 0, 5, 0, time.UTC), Entropy: rand.New(rand.NewSource(1)), Actor: "awr"}, func(tx *events.Tx) (any, error) {
					return tx.Append(events.NewEvent{Stream: "source/tasks.md", Payload: v})
				})
				require.NoError(t, err)
				require.Equal(t, sourceState(t, whole.Store, -1), sourceState(t, env.Store, revs[k]), "version %d at seq %d", k, revs[k])
			}
			roundTrip(t, env.Store)
		})
	}
}
