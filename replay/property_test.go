package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/awr-dev/awr/fixtures/logkit"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// world drives random but valid command sequences against a real project.
type world struct {
	t        *rapid.T
	ctx      context.Context
	env      *commands.Env
	now      time.Time
	sessions []string
	keys     []string
}

// Two context hashes, as context compile prints them.
var ctxC1, ctxC2 = "sha256:" + strings.Repeat("c1", 32), "sha256:" + strings.Repeat("c2", 32)

func openProject(t require.TestingT, dir string) *events.Store { return logkit.OpenProject(t, dir) }

// domain reports whether err is a refusal a valid command may get (the
// command validated and wrote nothing), as opposed to a failure.
func domain(err error) bool {
	switch fault.CodeOf(err) {
	case fault.ClaimConflict, fault.DependencyBlocked, fault.InvalidTransition, fault.NotFound, fault.RevisionConflict, fault.SourceConflict:
		return true
	}
	return false
}

// lease is a drawn lease of n seconds, or the policy's (nil) for 0: only
// the manifest may ask for claims that never expire.
func lease(n int) *int64 {
	if n == 0 {
		return nil
	}
	return new(int64(n) * 1000)
}

func (w *world) check(err error) {
	if err != nil && !domain(err) {
		w.t.Fatalf("unexpected error: %v", err)
	}
}

func (w *world) source() events.SourceIndexed {
	statuses := []string{"planned", "ready", "completed", "blocked", "planned"}
	n := rapid.IntRange(1, 6).Draw(w.t, "items")
	src := events.SourceIndexed{Path: "ledger.yaml", Adapter: "yaml_ledger", ContentHash: fmt.Sprintf("h%d", rapid.IntRange(0, 1<<30).Draw(w.t, "hash"))}
	src.Goals = []events.Goal{{Key: "G-1", Title: "goal"}}
	if rapid.Bool().Draw(w.t, "rule") {
		src.Rules = []events.Rule{{Key: "R-1", Text: "be careful", Strength: "hard"}}
	}
	for i := 1; i <= n; i++ {
		it := events.WorkItem{Key: fmt.Sprintf("K-%d", i), Title: fmt.Sprintf("item %d", i), Status: rapid.SampledFrom(statuses).Draw(w.t, "status"), Goal: "G-1",
			Priority: rapid.SampledFrom([]string{"p0", "p1", "", "high"}).Draw(w.t, "prio"), NextAction: "do it"}
		if i > 1 && rapid.IntRange(0, 3).Draw(w.t, "dep") == 0 {
			it.DependsOn = []events.Dependency{{Key: fmt.Sprintf("K-%d", rapid.IntRange(1, n+1).Draw(w.t, "depkey")), Required: rapid.Bool().Draw(w.t, "req")}}
		}
		src.Items = append(src.Items, it)
	}
	w.keys = w.keys[:0]
	for _, it := range src.Items {
		w.keys = append(w.keys, it.Key)
	}
	return src
}

func (w *world) session() string {
	if len(w.sessions) == 0 {
		return "no-such-session"
	}
	return rapid.SampledFrom(w.sessions).Draw(w.t, "session")
}

func (w *world) step() {
	ctx, env := w.ctx, w.env
	switch rapid.IntRange(0, 10).Draw(w.t, "action") {
	case 0:
		_, err := commands.IndexSource(ctx, env, commands.IndexRequest{Source: w.source()}, false)
		w.check(err)
	case 1, 2:
		res, err := commands.StartSession(ctx, env, commands.StartRequest{Work: rapid.SampledFrom(w.keys).Draw(w.t, "work"), Agent: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(w.t, "agent"),
			Claim: rapid.Bool().Draw(w.t, "claim"), TTLms: lease(rapid.IntRange(0, 3).Draw(w.t, "ttl"))})
		w.check(err)
		if err == nil {
			w.sessions = append(w.sessions, res.Session.ID)
		}
	case 3:
		loops := rapid.SliceOfN(rapid.SampledFrom([]string{"x", "y", "z"}), 0, 2).Draw(w.t, "loops")
		_, err := commands.RecordCheckpoint(ctx, env, commands.CheckpointRequest{SessionID: w.session(), Agent: "a", Digest: "did", NextAction: "next", KnowledgeFlags: commands.KnowledgeFlags{OpenLoops: loops},
			ContextHash: rapid.SampledFrom([]string{"", ctxC1, ctxC2}).Draw(w.t, "ctxhash")})
		w.check(err)
	case 4:
		_, err := commands.RecordContext(ctx, env, commands.ContextRecordRequest{SessionID: w.session(), ContextHash: rapid.SampledFrom([]string{ctxC1, ctxC2}).Draw(w.t, "ctx"), TokenBudget: 5000})
		w.check(err)
	case 5:
		_, err := commands.RenewClaim(ctx, env, commands.RenewRequest{SessionID: w.session(), TTLms: lease(rapid.IntRange(0, 3).Draw(w.t, "rttl"))})
		w.check(err)
	case 6:
		_, err := commands.ReleaseClaim(ctx, env, commands.ReleaseRequest{SessionID: w.session()})
		w.check(err)
	case 7:
		_, err := commands.EndSession(ctx, env, commands.EndRequest{SessionID: w.session(), Outcome: rapid.SampledFrom([]string{"completed", "incomplete", "interrupted", "abandoned"}).Draw(w.t, "outcome")})
		w.check(err)
	case 8:
		var claim *bool
		if c := rapid.IntRange(0, 2).Draw(w.t, "rclaim"); c > 0 {
			b := c == 1
			claim = &b
		}
		res, err := commands.ResumeSession(ctx, env, commands.ResumeRequest{FromSession: w.session(), Agent: "r", Claim: claim})
		w.check(err)
		if err == nil {
			w.sessions = append(w.sessions, res.Session.ID)
		}
	case 9:
		s := w.session()
		req := commands.BindRequest{Client: "host", ExternalSession: fmt.Sprintf("host:%d", rapid.IntRange(0, 2).Draw(w.t, "ext")), Work: rapid.SampledFrom(w.keys).Draw(w.t, "bwork")}
		if rapid.Bool().Draw(w.t, "from") {
			req.FromSession = s
		} else {
			req.SessionID = s
		}
		_, err := commands.BindClient(ctx, env, req)
		if err != nil && !fault.Is(err, fault.InvalidInput) {
			w.check(err)
		}
	case 10:
		w.now = w.now.Add(time.Duration(rapid.IntRange(1, 2500).Draw(w.t, "advance")) * time.Millisecond)
	}
}

// requireRegisterAtHead checks that the register read at the head from
// its current rows equals the register read as of the head's revision,
// item for item and in its order.
func requireRegisterAtHead(rt *rapid.T, st *events.Store) {
	require.NoError(rt, st.Read(context.Background(), func(r *events.Reader) error {
		current, err := projections.WorkItemsAt(r.Conn, r.Head, true)
		require.NoError(rt, err)
		asOf, err := projections.WorkItemsAt(r.Conn, r.Head, false)
		require.NoError(rt, err)
		require.Equal(rt, asOf, current)
		return nil
	}))
}

// newWorld opens a project in a new temporary directory, initializes it
// and indexes a drawn source; cleanup closes the store and removes the
// directory.
func newWorld(rt *rapid.T, name string) (w *world, st *events.Store, cleanup func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "awr-"+name+"-")
	require.NoError(rt, err)
	st = openProject(rt, dir)
	cleanup = func() {
		st.Close()
		os.RemoveAll(dir)
	}
	w = &world{t: rt, ctx: ctx, now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	w.env = &commands.Env{Store: st, Now: func() time.Time { return w.now }, Entropy: rand.New(rand.NewSource(rapid.Int64().Draw(rt, "seed")))}
	_, err = commands.Init(ctx, w.env, commands.InitRequest{Name: name})
	require.NoError(rt, err)
	_, err = commands.IndexSource(ctx, w.env, commands.IndexRequest{Source: w.source()}, false)
	require.NoError(rt, err)
	return w, st, cleanup
}

func checksumsAt(t require.TestingT, st *events.Store, rev int64) map[string]string {
	out := map[string]string{}
	require.NoError(t, st.Read(context.Background(), func(r *events.Reader) error {
		if rev < 0 {
			rev = r.Head
		}
		for _, p := range projections.All() {
			sum, err := projections.StateChecksumAt(r.Conn, p, rev)
			if err != nil {
				return err
			}
			out[p.Name()] = sum
		}
		return nil
	}))
	return out
}

// TestProperty_ReplayEqualsIncremental: after any valid command sequence,
// the projections built incrementally equal a rebuild from the log; the
// state read at any revision equals the state of a log truncated there;
// and single-item readiness agrees with the full readiness evaluation.
// Slow: every rapid check rebuilds the projections at every revision.
func TestProperty_ReplayEqualsIncremental(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		w, st, cleanup := newWorld(rt, "prop")
		defer cleanup()
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			w.step()
		}

		head, _, mismatches, err := replay.CompareWithRebuild(ctx, st, nil)
		require.NoError(rt, err)
		require.Empty(rt, mismatches, "incremental projections differ from a rebuild")

		requireRegisterAtHead(rt, st)

		// Readiness of one item equals the full evaluation.
		require.NoError(rt, st.Read(ctx, func(r *events.Reader) error {
			now := w.now.UnixMilli()
			all, err := projections.ReadinessAt(r.Conn, r.Head, now, true)
			require.NoError(rt, err)
			for _, want := range all {
				got, ok, err := projections.ReadinessOf(r.Conn, want.Item.Key, r.Head, now, true)
				require.NoError(rt, err)
				require.True(rt, ok)
				require.Equal(rt, want.Ready, got.Ready, want.Item.Key)
				require.ElementsMatch(rt, want.Reasons, got.Reasons, want.Item.Key)
			}
			// The head's work queues the projection keeps file every item
			// as the full evaluation with no claim does, in its order.
			items, err := projections.WorkItemsAt(r.Conn, r.Head, true)
			require.NoError(rt, err)
			want := map[string][]projections.Place{}
			for _, x := range projections.Evaluate(items, nil) {
				q, _ := projections.QueueOf(x)
				want[q] = append(want[q], projections.PlaceOf(x.Item))
			}
			for _, q := range []string{projections.QueueReady, projections.QueueCurrent, projections.QueueWaiting, projections.QueueBlocked, projections.QueueClosed, projections.QueueOther} {
				var got []projections.Place
				require.NoError(rt, projections.QueuePage(r.Conn, q, nil, func(x projections.Queued) (bool, error) {
					got = append(got, x.Place())
					return true, nil
				}))
				require.Equal(rt, want[q], got, "queue %s", q)
			}
			return nil
		}))

		// --at REV equals a replay of the log truncated at REV.
		rev := rapid.Int64Range(0, head).Draw(rt, "rev")
		var buf bytes.Buffer
		_, err = replay.Export(ctx, st, &buf, rev)
		require.NoError(rt, err)
		tdir, err := os.MkdirTemp("", "awr-prop-trunc-")
		require.NoError(rt, err)
		defer os.RemoveAll(tdir)
		trunc := openProject(rt, tdir)
		defer trunc.Close()
		if rev > 0 {
			_, err = replay.Import(ctx, trunc, &buf, "trunc.jsonl")
			require.NoError(rt, err)
		}
		require.Equal(rt, checksumsAt(rt, trunc, -1), checksumsAt(rt, st, rev), "state at %d differs from a log truncated at %d", rev, rev)

		if rev > 0 {
			live := door(st, time.Now())
			defer live.Close()
			at, err := live.Status(ctx, project.StatusRequest{Read: project.Read{At: &rev}})
			require.NoError(rt, err)
			truncated := door(trunc, time.UnixMilli(at.LastEventAt))
			defer truncated.Close()
			tr, err := truncated.Status(ctx, project.StatusRequest{})
			require.NoError(rt, err)
			require.Equal(rt, tr.HeadHash, at.HeadHash)
			require.Equal(rt, tr.Sessions, at.Sessions)
			require.Equal(rt, tr.LiveClaims, at.LiveClaims)
			require.Equal(rt, tr.ReadyCount, at.ReadyCount)
			require.Equal(rt, tr.WorkItems, at.WorkItems)
		}
	})
}

// door opens the project of st through the project door, on clock now;
// the caller closes it.
func door(st *events.Store, now time.Time) *project.Project {
	p, err := project.Open(context.Background(), filepath.Dir(filepath.Dir(st.Path())), project.Options{Now: func() time.Time { return now }})
	if err != nil {
		panic(err)
	}
	return p
}
