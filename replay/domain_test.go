package replay_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/replay"
	"github.com/stretchr/testify/require"
)

// forge decodes the demo log, lets edit change it, and re-hashes every
// event from the first it changed (the index edit returns), so the chain
// holds and only the domain can tell. It returns the forged JSONL.
func forge(t *testing.T, export []byte, edit func(evs []*events.Event) int) string {
	t.Helper()
	var b strings.Builder
	for _, e := range forgeEvents(t, export, edit) {
		line, err := events.EncodeJSON(e.ToEnvelope())
		require.NoError(t, err)
		b.Write(line)
		b.WriteString("\n")
	}
	return b.String()
}

// forgeEvents is forge's log as events.
func forgeEvents(t *testing.T, export []byte, edit func(evs []*events.Event) int) []*events.Event {
	t.Helper()
	var evs []*events.Event
	for _, l := range strings.Split(strings.TrimSpace(string(export)), "\n") {
		e, err := replay.DecodeEnvelopeLine([]byte(l))
		require.NoError(t, err)
		evs = append(evs, e)
	}
	from := edit(evs)
	for len(evs) > 0 && evs[len(evs)-1] == nil {
		evs = evs[:len(evs)-1]
	}
	for i := from; i < len(evs); i++ {
		evs[i].PrevHash = evs[i-1].Hash
		evs[i].Hash = events.ComputeHash(evs[i].PrevHash, evs[i])
	}
	return evs
}

// payloadEdit replaces old by new in the payload of the event at index i
// (seq i+1), which must hold it.
func payloadEdit(t *testing.T, i int, old, new string) func(evs []*events.Event) int {
	return func(evs []*events.Event) int {
		p := string(evs[i].Payload)
		require.Contains(t, p, old)
		evs[i].Payload = []byte(strings.Replace(p, old, new, 1))
		return i
	}
}

// TestImport_RefusesForgedDomain: a re-hashed log that breaks the domain
// (a repeated fencing token, an event off its stream, two live claims on
// one work item) is refused by import naming the seq and the invariant,
// and fails verify (issue #13, row 12).
func TestImport_RefusesForgedDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, export := demoProject(t)
	for _, tc := range []struct {
		name string
		edit func(t *testing.T) func(evs []*events.Event) int
		seq  string
		want string
	}{
		// seq 10 moves the claim to the successor with token 2.
		{"RepeatedFencingToken", func(t *testing.T) func([]*events.Event) int {
			return payloadEdit(t, 9, `"fencing_token":2`, `"fencing_token":1`)
		}, "seq 10", "not above the 1 already issued"},
		// seq 6 is the builder's checkpoint on its own session stream.
		{"EventOffItsStream", func(t *testing.T) func([]*events.Event) int {
			return payloadEdit(t, 5, `"session_id":"`, `"session_id":"X`)
		}, "seq 6", "where its payload names session/X"},
		// seq 9 releases the builder's claim before the move; without
		// it (the log renumbered) the move's acquisition finds the first
		// claim still live.
		{"TwoLiveClaims", func(t *testing.T) func([]*events.Event) int { return dropEvent(t, 8) }, "seq 9", "still holds it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			forged := forge(t, export, tc.edit(t))
			st := openProject(t, t.TempDir())
			defer st.Close()
			_, err := replay.Import(ctx, st, strings.NewReader(forged), "forged.jsonl")
			require.True(t, fault.Is(err, fault.InvalidInput), "%v", err)
			require.Contains(t, err.Error(), tc.seq+": domain: ")
			require.Contains(t, err.Error(), tc.want)
			require.NoError(t, st.Read(ctx, func(r *events.Reader) error {
				require.Zero(t, r.Head, "a refused import appends nothing")
				return nil
			}))
		})
	}
}

// dropEvent removes the event at index i and renumbers the log after it:
// seqs, and the versions of its stream.
func dropEvent(t *testing.T, i int) func(evs []*events.Event) int {
	return func(evs []*events.Event) int {
		gone := evs[i]
		require.Equal(t, events.KindClaimReleased, gone.Kind)
		copy(evs[i:], evs[i+1:])
		for _, e := range evs[i : len(evs)-1] {
			e.Seq--
			if e.Stream == gone.Stream {
				e.StreamVersion--
			}
		}
		evs[len(evs)-1] = nil
		return i
	}
}

// TestVerify_FailsOnForgedDomain: the same forgery written into a
// project's database behind the triggers' back fails verify at its seq.
func TestVerify_FailsOnForgedDomain(t *testing.T) {
	t.Parallel()
	dir, export := demoProject(t)
	var stmts []string
	for _, e := range forgeEvents(t, export, payloadEdit(t, 9, `"fencing_token":2`, `"fencing_token":1`))[9:] {
		stmts = append(stmts, fmt.Sprintf("UPDATE events SET payload = '%s', prev_hash = X'%s', hash = X'%s' WHERE seq = %d",
			strings.ReplaceAll(string(e.Payload), "'", "''"), hex.EncodeToString(e.PrevHash), hex.EncodeToString(e.Hash), e.Seq))
	}
	tamper(t, dir, stmts...)
	fe := verifyFails(t, dir)
	require.Contains(t, fe.Message, "domain: ")
	require.Contains(t, fe.Message, "fencing token 1")
	require.EqualValues(t, 10, fe.Details["first_bad_seq"], fe.Message)
}
