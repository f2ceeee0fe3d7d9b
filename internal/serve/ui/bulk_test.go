package ui_test

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
)

// bulkSpacing is the time between two appended events: a million span
// 23 days, inside the 40 days the base history is dated back.
const bulkSpacing = 2 * time.Second

// bulk is a large project built fast for the scale tests, and what the
// tests need to know of it.
type bulk struct {
	*fixture
	// Head is the revision after the fork (the project's own head).
	Head int64
	// Needle is the seq of the one checkpoint whose digest holds the word
	// "zebra" (what a search finds).
	Needle int64
	// Times are the occurred_at of a few seqs (seq -> UTC ms).
	Times map[int64]int64
}

// newBulk builds a project of about n events without appending them one
// command at a time (awr bench generate writes about 1,200 events a
// second): the fixture's real history, written by awr itself with its
// clock set 40 days back, is exported; n more checkpoints by its two
// running sessions (bob on CART-1, carol on OPS-1) are appended to the
// export, each an envelope chained to the one before by the log's own
// hash (events.ComputeHash), two seconds apart; the export is imported
// into a new project (awr import verifies the whole chain and the log's
// rules, and folds every projection) and the copy is forked so that it
// takes writes. The log is as real as any other: awr verify passes.
func newBulk(t *testing.T, n int) *bulk {
	t.Helper()
	t0 := time.Now()
	back := time.Now().Add(-40 * 24 * time.Hour).UnixMilli()
	f := newFixtureAt(t, back)
	base := filepath.Join(t.TempDir(), "base.jsonl")
	f.run("export", "--output", base)
	envs := readExport(t, base)
	last := envs[len(envs)-1]
	streams := map[string]int64{}
	var tmpl = map[string]map[string]any{}
	for _, e := range envs {
		streams[e.Stream] = e.StreamVersion
		if e.Kind == events.KindCheckpointRecorded {
			var p map[string]any
			require.NoError(t, json.Unmarshal(e.Payload, &p))
			tmpl[p["session_id"].(string)] = p
		}
	}
	// carol has no checkpoint of her own: hers is bob's, re-addressed.
	carol := map[string]any{}
	for k, v := range tmpl[f.Bob] {
		carol[k] = v
	}
	carol["session_id"], carol["work"], carol["agent"] = f.Carol, "OPS-1", "carol"
	tmpl[f.Carol] = carol
	for _, p := range tmpl {
		delete(p, "repo")
		delete(p, "changes")
		delete(p, "context_hash")
		delete(p, "context_hash_note")
		p["context_hash_verified"] = false
	}

	out, err := os.Create(filepath.Join(t.TempDir(), "bulk.jsonl"))
	require.NoError(t, err)
	w := bufio.NewWriterSize(out, 1<<20)
	for _, e := range envs {
		line, err := json.Marshal(e)
		require.NoError(t, err)
		w.Write(line)
		w.WriteByte('\n')
	}
	prev, err := hex.DecodeString(last.Hash)
	require.NoError(t, err)
	b := &bulk{fixture: f, Needle: last.Seq + int64(n)*2/3, Times: map[int64]int64{}}
	entropy := ulid.Monotonic(rand.Reader, 0)
	who := []struct{ session, agent string }{{f.Bob, "bob"}, {f.Carol, "carol"}}
	for i := int64(1); i <= int64(n); i++ {
		seq := last.Seq + i
		at := last.OccurredAt + i*bulkSpacing.Milliseconds()
		s := who[i%2]
		p := tmpl[s.session]
		p["checkpoint_id"] = ulid.MustNew(uint64(at), entropy).String()
		p["digest"] = "step " + strconv.FormatInt(i, 10) + " of the " + s.agent + " work"
		if seq == b.Needle {
			p["digest"] = "the zebra crossing fixed at step " + strconv.FormatInt(i, 10)
		}
		p["next_action"] = "take step " + strconv.FormatInt(i+1, 10)
		payload, err := json.Marshal(p)
		require.NoError(t, err)
		stream := "session/" + s.session
		streams[stream]++
		ev := &events.Event{Seq: seq, ID: ulid.MustNew(uint64(at), entropy).String(), Kind: events.KindCheckpointRecorded,
			Stream: stream, StreamVersion: streams[stream], OccurredAt: at, Actor: s.agent, Payload: payload}
		ev.PrevHash = prev
		ev.Hash = events.ComputeHash(prev, ev)
		prev = ev.Hash
		line, err := json.Marshal(ev.ToEnvelope())
		require.NoError(t, err)
		w.Write(line)
		w.WriteByte('\n')
		if i == 1 || i == int64(n)/2 || seq == b.Needle || i == int64(n) {
			b.Times[seq] = at
		}
	}
	require.NoError(t, w.Flush())
	require.NoError(t, out.Close())
	built := time.Since(t0)

	copyDir := filepath.Join(t.TempDir(), "bulk")
	require.NoError(t, os.MkdirAll(copyDir, 0o755))
	t1 := time.Now()
	f.run("import", out.Name(), "--project", copyDir)
	imported := time.Since(t1)
	f.dir = copyDir
	for i, kv := range f.env {
		if strings.HasPrefix(kv, "AWR_PROJECT=") {
			f.env[i] = "AWR_PROJECT=" + copyDir
		}
	}
	f.run("fork", "--accept", "--reason", "scale test")
	var head struct {
		ProjectRevision int64 `json:"project_revision"`
	}
	require.NoError(t, json.Unmarshal(f.run("status"), &head))
	b.Head = head.ProjectRevision
	require.Equal(t, last.Seq+int64(n)+1, b.Head, "the base, the appended checkpoints and the fork")
	t.Logf("bulk log of %d events: base and JSONL in %v, awr import in %v", b.Head, built.Round(time.Millisecond), imported.Round(time.Millisecond))
	return b
}

// readExport reads an export's envelopes.
func readExport(t *testing.T, path string) []events.Envelope {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []events.Envelope
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e events.Envelope
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		out = append(out, e)
	}
	require.NotEmpty(t, out)
	return out
}

// String names the bulk log in messages.
func (b *bulk) String() string { return fmt.Sprintf("bulk log of %d events", b.Head) }
