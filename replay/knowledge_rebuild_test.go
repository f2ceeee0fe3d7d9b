package replay_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"testing"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// knowledgeStep records a checkpoint that changes a work item's knowledge
// in every way a checkpoint can: it opens loops (some texts repeating an
// open loop, some only after normalizing space), decisions, facts and
// hypotheses, and resolves, drops, confirms, retracts or supersedes an
// item that may or may not exist or be closed already.
func (w *world) knowledgeStep() {
	t := w.t
	texts := []string{"x", "y", "z", " x ", "y  z", "y z"}
	f := commands.KnowledgeFlags{
		OpenLoops:  rapid.SliceOfN(rapid.SampledFrom(texts), 0, 3).Draw(t, "open"),
		Decisions:  rapid.SliceOfN(rapid.SampledFrom(texts), 0, 1).Draw(t, "decisions"),
		Facts:      rapid.SliceOfN(rapid.SampledFrom(texts), 0, 1).Draw(t, "facts"),
		Hypotheses: rapid.SliceOfN(rapid.SampledFrom(texts), 0, 1).Draw(t, "hypotheses"),
	}
	id := fmt.Sprintf("%s-%d", rapid.SampledFrom([]string{"L", "D", "F", "H"}).Draw(t, "prefix"), rapid.IntRange(1, 4).Draw(t, "num"))
	note := rapid.SampledFrom([]string{"", "=done", "=moot"}).Draw(t, "note")
	switch rapid.IntRange(0, 5).Draw(t, "change") {
	case 0:
		f.ResolveLoops = []string{id + note}
	case 1:
		f.DropLoops = []string{id + note}
	case 2:
		f.Confirm = []string{id}
	case 3:
		f.Retract = []string{id + note}
	case 4:
		f.Supersede = []string{id + "=" + rapid.SampledFrom(texts).Draw(t, "by")}
	}
	_, err := commands.RecordCheckpoint(w.ctx, w.env, commands.CheckpointRequest{SessionID: w.session(), Agent: "a", Digest: "did", NextAction: "next", KnowledgeFlags: f})
	w.check(err)
}

// legacyCheckpoint appends, for an active session, a checkpoint in the
// form logs written before knowledge ids use: its loops as bare texts in
// open_loops, which open a loop unless one with the same text is open.
func (w *world) legacyCheckpoint() {
	loops := rapid.SliceOfN(rapid.SampledFrom([]string{"x", "y", "z", " x ", "w"}), 1, 3).Draw(w.t, "legacy")
	_, err := w.env.Store.Write(w.ctx, events.WriteOptions{Now: w.now, Entropy: w.env.Entropy, Actor: "a"}, func(tx *events.Tx) (any, error) {
		for _, id := range w.sessions {
			s, err := projections.SessionAt(tx.Conn, id, tx.Head())
			if err != nil || s == nil || s.Status != "active" {
				continue
			}
			cid := tx.NewID()
			_, err = tx.Append(events.NewEvent{Stream: "session/" + s.ID, ID: cid, Payload: events.CheckpointRecorded{
				CheckpointID: cid, SessionID: s.ID, Work: s.Work, Agent: "a", Digest: "legacy", NextAction: "next", OpenLoops: loops,
			}})
			return nil, err
		}
		return nil, fault.New(fault.NotFound, "no active session")
	})
	w.check(err)
}

// TestProperty_KnowledgeAndSearchRebuild: the knowledge and search
// projections a rebuild holds in memory (every version of a search
// document, with the id the incremental path gives it; the current
// version of every knowledge item, the highest number of each id prefix
// and each work item's items) leave tables equal, row for row and id for
// id, to those written event by event, for every way a checkpoint or a
// source changes them.
func TestProperty_KnowledgeAndSearchRebuild(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "awr-know-")
		require.NoError(rt, err)
		defer os.RemoveAll(dir)
		st := openProject(rt, dir)
		defer st.Close()
		w := &world{t: rt, ctx: ctx, now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
		w.env = &commands.Env{Store: st, Now: func() time.Time { return w.now }, Entropy: rand.New(rand.NewSource(rapid.Int64().Draw(rt, "seed")))}
		_, err = commands.Init(ctx, w.env, commands.InitRequest{Name: "know"})
		require.NoError(rt, err)
		_, err = commands.IndexSource(ctx, w.env, commands.IndexRequest{Source: w.source()}, false)
		require.NoError(rt, err)
		steps := rapid.IntRange(1, 40).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			switch rapid.IntRange(0, 9).Draw(rt, "kstep") {
			case 0, 1, 2:
				w.knowledgeStep()
			case 3:
				w.legacyCheckpoint()
			default:
				w.step()
			}
		}
		_, _, mismatches, err := replay.CompareWithRebuild(ctx, st, nil)
		require.NoError(rt, err)
		require.Empty(rt, mismatches, "incremental projections differ from a rebuild")
	})
}
