package anchor_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// An anchored log (issue #47, item 1) is one whose head was recorded
// twice outside it, in an anchor file and in the git notes of its
// repository: at A1, after the first checkpoint, and at A2, the head after
// two more checkpoints and the session's end. Each forgery below rewrites
// it as a forger who holds the database would, re-hashing the chain so
// that plain verify finds nothing, and must be refused by `verify
// --anchors` (file and git notes) and by `import --anchors` of its export
// (file and git notes), naming the seq the anchors disagree with.
type anchoredLog struct {
	root, dir string // the repository, the project in it
	file      string // the anchor file
	pid       string
	a1, a2    int64
	h1        string // the hash anchored at A1
	session   string
	// store is the shared log's URL for a project on PostgreSQL.
	store string
}

// forged is a log as a forger rewrites it: the events (renumbered and
// re-hashed when written back) and the origin row to put beside them.
type forged struct {
	evs    []*events.Event
	origin *events.Origin
}

// forgery is one of the twelve: forge rewrites l (anchored as a says);
// want is the seq the refusal names.
type forgery struct {
	name  string
	forge func(t *testing.T, l *forged, a *anchoredLog)
	want  func(a *anchoredLog) int64
	// noOwnAnchor is the refusal of a log that claims to be a fork under
	// a new id: it holds no anchor of the project it says it is.
	noOwnAnchor bool
}

// forgeries are the twelve forgeries of the adversarial pass.
func forgeries() []forgery {
	atA2 := func(a *anchoredLog) int64 { return a.a2 }
	atA1 := func(a *anchoredLog) int64 { return a.a1 }
	return []forgery{
		{name: "EditedPayload", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			editCheckpoint(t, l.checkpointAfter(t, a.a1), "the forger's digest")
		}},
		{name: "EditedActor", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			l.evs[a.a1].Actor = "mallory" // the event at A1+1
		}},
		{name: "ReorderedEvents", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			// The two checkpoints after A1 trade places: their envelopes
			// stay (seq, stream version, time), their content moves.
			var cps []*events.Event
			for _, e := range l.evs[a.a1:] {
				if e.Kind == events.KindCheckpointRecorded {
					cps = append(cps, e)
				}
			}
			require.Len(t, cps, 2)
			cps[0].Payload, cps[1].Payload = cps[1].Payload, cps[0].Payload
			cps[0].ID, cps[1].ID = cps[1].ID, cps[0].ID
		}},
		{name: "DeletedEvent", want: atA1, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			// The first checkpoint, before A1, never happened.
			for i, e := range l.evs[:a.a1] {
				if e.Kind == events.KindCheckpointRecorded {
					l.evs = append(l.evs[:i:i], l.evs[i+1:]...)
					return
				}
			}
			t.Fatal("no checkpoint before A1")
		}},
		{name: "InsertedEvent", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			cp := l.checkpointAfter(t, a.a1)
			extra := *cp
			extra.ID = "01FORGEDEVENT0000000000000"
			editCheckpoint(t, &extra, "a checkpoint nobody recorded")
			i := int(cp.Seq) // after cp
			l.evs = append(l.evs[:i:i], append([]*events.Event{&extra}, l.evs[i:]...)...)
		}},
		{name: "TruncatedLog", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			l.evs = l.evs[:a.a1+1]
		}},
		{name: "DoubleClaim", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			// A second live claim on the same work item, right after A1.
			var claim *events.Event
			for _, e := range l.evs[:a.a1] {
				if e.Kind == events.KindClaimAcquired {
					claim = e
				}
			}
			require.NotNil(t, claim)
			second := *claim
			second.ID = "01FORGEDCLA1M0000000000000"
			second.RequestID = ""
			second.OccurredAt = l.evs[a.a1-1].OccurredAt
			editPayload(t, &second, func(v events.Payload) {
				c := v.(*events.ClaimAcquired)
				c.ClaimID, c.Agent, c.FencingToken = "01FORGEDCLA1MID00000000000", "mallory", c.FencingToken+1
			})
			i := int(a.a1)
			l.evs = append(l.evs[:i:i], append([]*events.Event{&second}, l.evs[i:]...)...)
		}},
		{name: "FutureTime", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			l.evs[len(l.evs)-1].OccurredAt = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
		}},
		{name: "BackdatedTimes", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			// Everything after A1 happened at A1's time (never earlier:
			// time still runs forward).
			for _, e := range l.evs[a.a1:] {
				e.OccurredAt = l.evs[a.a1-1].OccurredAt
			}
		}},
		{name: "ForgedOriginRow", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			// The bypass of the adversarial pass: a rewrite after A1 and an
			// origin row saying the log is a copy made at A1.
			editCheckpoint(t, l.checkpointAfter(t, a.a1), "the forger's digest")
			l.origin = &events.Origin{ProjectID: a.pid, HeadSeq: a.a1, HeadHash: a.h1, ImportedAt: l.evs[a.a1-1].OccurredAt}
		}},
		{name: "ForgedForkOfOwnID", want: atA2, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			// The second bypass: a project_forked of the project's own id
			// right after A1 (and the origin row that goes with it).
			editCheckpoint(t, l.checkpointAfter(t, a.a1), "the forger's digest")
			l.insertFork(t, a, a.pid)
			l.origin = &events.Origin{ProjectID: a.pid, HeadSeq: a.a1, HeadHash: a.h1, ImportedAt: l.evs[a.a1-1].OccurredAt}
		}},
		{name: "ForgedForkUnderNewID", noOwnAnchor: true, want: func(a *anchoredLog) int64 { return a.a1 + 1 }, forge: func(t *testing.T, l *forged, a *anchoredLog) {
			// A fork the log's rules accept (a new id, right after A1): the
			// log is then another project, which no anchor vouches for.
			editCheckpoint(t, l.checkpointAfter(t, a.a1), "the forger's digest")
			l.insertFork(t, a, "01FORGEDF0RK1D000000000000")
			l.origin = &events.Origin{ProjectID: a.pid, HeadSeq: a.a1, HeadHash: a.h1, ImportedAt: l.evs[a.a1-1].OccurredAt}
		}},
	}
}

// checkpointAfter returns the first checkpoint after seq.
func (l *forged) checkpointAfter(t *testing.T, seq int64) *events.Event {
	t.Helper()
	for _, e := range l.evs[seq:] {
		if e.Kind == events.KindCheckpointRecorded {
			return e
		}
	}
	t.Fatalf("no checkpoint after seq %d", seq)
	return nil
}

// insertFork puts a project_forked of id right after A1, naming A1 as the
// origin's head, as `awr fork --accept` on a copy made at A1 would.
func (l *forged) insertFork(t *testing.T, a *anchoredLog, id string) {
	t.Helper()
	raw := canonical(t, events.ProjectForked{ProjectID: id, OriginProjectID: a.pid, OriginHeadSeq: a.a1, OriginHeadHash: a.h1, By: "mallory"})
	fork := &events.Event{ID: "01FORGEDF0RKEVENT000000000", Kind: events.KindProjectForked, Stream: "project",
		OccurredAt: l.evs[a.a1-1].OccurredAt, Actor: "mallory", Payload: raw}
	i := int(a.a1)
	l.evs = append(l.evs[:i:i], append([]*events.Event{fork}, l.evs[i:]...)...)
}

func editPayload(t *testing.T, e *events.Event, fn func(v events.Payload)) {
	t.Helper()
	v, err := events.Decode(e)
	require.NoError(t, err)
	fn(v)
	e.Payload = canonical(t, v)
}

// canonical returns v's payload bytes as the store writes them.
func canonical(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	raw, err = events.CanonicalJSON(raw)
	require.NoError(t, err)
	return raw
}

func editCheckpoint(t *testing.T, e *events.Event, digest string) {
	t.Helper()
	editPayload(t, e, func(v events.Payload) { v.(*events.CheckpointRecorded).Digest = digest })
}

// sealed renumbers l's events 1..n, gives each stream its versions 1, 2,
// 3… in order and re-hashes the whole chain, as a forger's tool does.
func (l *forged) sealed() []*events.Event {
	versions := map[string]int64{}
	prev := make([]byte, events.HashSize)
	out := make([]*events.Event, len(l.evs))
	for i, e := range l.evs {
		c := *e
		c.Seq = int64(i + 1)
		versions[c.Stream]++
		c.StreamVersion = versions[c.Stream]
		c.PrevHash = prev
		c.Hash = events.ComputeHash(prev, &c)
		prev = c.Hash
		out[i] = &c
	}
	return out
}

// git runs git in dir; the test fails when it does.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %s: %s", strings.Join(args, " "), out)
}

// newAnchoredLog makes the anchored log, in SQLite or, with store, in
// the shared PostgreSQL database store names.
func newAnchoredLog(t *testing.T, store string) *anchoredLog {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	git(t, root, "init", "-q")
	git(t, root, "config", "user.email", "anchor@example.com")
	git(t, root, "config", "user.name", "anchor")
	dir := filepath.Join(root, "proj")
	require.NoError(t, os.Mkdir(dir, 0o755))
	_, err := fixtures.CopyProject("checkout", dir)
	require.NoError(t, err)
	git(t, root, "add", "-A")
	git(t, root, "commit", "-q", "-m", "the project")
	a := &anchoredLog{root: root, dir: dir, file: filepath.Join(t.TempDir(), "witness.txt"), store: store}

	p, err := project.Open(ctx, dir, project.Options{})
	require.NoError(t, err)
	defer p.Close()
	init, err := p.Init(ctx, project.InitRequest{Accept: true, Store: store})
	require.NoError(t, err)
	a.pid = init.ProjectID
	s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "builder", Claim: true})
	require.NoError(t, err)
	a.session = s.Session.ID
	checkpoint := func(digest string) {
		_, err := p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: a.session, Agent: "builder", Digest: digest, NextAction: "carry on"})
		require.NoError(t, err)
	}
	anchor := func() (int64, string) {
		f, err := p.Anchor(ctx, project.AnchorRequest{To: a.file})
		require.NoError(t, err)
		g, err := p.Anchor(ctx, project.AnchorRequest{To: "git"})
		require.NoError(t, err)
		require.Equal(t, f.Seq, g.Seq)
		return f.Seq, f.Hash
	}
	checkpoint("first")
	a.a1, a.h1 = anchor()
	checkpoint("second")
	checkpoint("third")
	_, err = p.SessionEnd(ctx, project.SessionEndRequest{SessionID: a.session, Outcome: "completed", Agent: "builder"})
	require.NoError(t, err)
	a.a2, _ = anchor()
	require.Greater(t, a.a2, a.a1+3)
	return a
}

// readLog returns the events of the project's log (its cache, for a
// shared one).
func readLog(t *testing.T, dir string) []*events.Event {
	t.Helper()
	return readLogAt(t, events.DBPath(dir))
}

// readLogAt returns the events of the SQLite file path.
func readLogAt(t *testing.T, path string) []*events.Event {
	t.Helper()
	conn, err := events.OpenConn(path, sqlite.OpenReadOnly)
	require.NoError(t, err)
	defer conn.Close()
	var evs []*events.Event
	require.NoError(t, events.ScanEvents(conn, 1, math.MaxInt64, func(e *events.Event) error {
		evs = append(evs, e)
		return nil
	}))
	return evs
}

// rewriteSQLite writes evs over the log of the SQLite file path behind
// the append-only triggers' back (dropped, then put back as schema 001
// declares them), with origin in the origin table when not nil.
func rewriteSQLite(t *testing.T, path string, evs []*events.Event, origin *events.Origin) {
	t.Helper()
	conn, err := events.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenWAL)
	require.NoError(t, err)
	defer conn.Close()
	run := func(q string, args map[string]any) {
		t.Helper()
		require.NoError(t, sqlitex.ExecuteTransient(conn, q, &sqlitex.ExecOptions{Named: args}), "%s", q)
	}
	run("DROP TRIGGER events_no_update", nil)
	run("DROP TRIGGER events_no_delete", nil)
	run("DROP TRIGGER events_seq_gapless", nil)
	run("DELETE FROM events", nil)
	run("DELETE FROM requests", nil)
	for _, e := range evs {
		var req any
		if e.RequestID != "" {
			req = e.RequestID
		}
		run(`INSERT INTO events (seq, id, kind, stream, stream_version, occurred_at, actor, request_id, payload, prev_hash, hash)
VALUES (:seq, :id, :kind, :stream, :version, :at, :actor, :req, :payload, :prev, :hash)`, map[string]any{
			":seq": e.Seq, ":id": e.ID, ":kind": string(e.Kind), ":stream": e.Stream, ":version": e.StreamVersion, ":at": e.OccurredAt,
			":actor": e.Actor, ":req": req, ":payload": string(e.Payload), ":prev": e.PrevHash, ":hash": e.Hash})
	}
	if origin != nil {
		h, err := hex.DecodeString(origin.HeadHash)
		require.NoError(t, err)
		run("DELETE FROM origin", nil)
		run("INSERT INTO origin (id, project_id, head_seq, head_hash, imported_at) VALUES (1, :p, :s, :h, :at)",
			map[string]any{":p": origin.ProjectID, ":s": origin.HeadSeq, ":h": h, ":at": origin.ImportedAt})
	}
	run(`CREATE TRIGGER events_seq_gapless BEFORE INSERT ON events
WHEN NEW.seq IS NOT COALESCE((SELECT MAX(seq) FROM events), 0) + 1
BEGIN
  SELECT RAISE(ABORT, 'events: seq must be exactly project_revision + 1');
END`, nil)
	run(`CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN
  SELECT RAISE(ABORT, 'events: the log is append-only, UPDATE is rejected');
END`, nil)
	run(`CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN
  SELECT RAISE(ABORT, 'events: the log is append-only, DELETE is rejected');
END`, nil)
}

// requireRefusal asserts err is the anchors' VerifyFailed for forgery f:
// a broken anchor naming f's seq and where it was read, with a hint that
// restores from an export (never `awr replay`), or, for a claimed fork,
// no anchor of the project the log claims to be, naming the fork's seq.
func requireRefusal(t *testing.T, f forgery, a *anchoredLog, err error, ac *project.AnchorCheck, where string) {
	t.Helper()
	fe := fault.As(err)
	require.NotNil(t, fe, "refused: %v", err)
	require.Equal(t, fault.VerifyFailed, fe.Code, "%v", err)
	require.NotContains(t, fe.Hint, "replay")
	if ac != nil {
		require.False(t, ac.OK)
		if f.noOwnAnchor {
			require.Nil(t, ac.Broken, "%v", err)
			require.Zero(t, ac.Own)
			require.NotEqual(t, a.pid, ac.ProjectID)
			require.Contains(t, fe.Message, "holds no anchor of project "+ac.ProjectID)
		} else {
			require.NotNil(t, ac.Broken, "%v", err)
			require.Equal(t, f.want(a), ac.Broken.Seq, "%v", err)
		}
	}
	if f.noOwnAnchor {
		require.NotEqual(t, a.pid, fe.Details["project_id"])
		require.EqualValues(t, f.want(a), fe.Details["seq"], "%v", err)
		require.Contains(t, fe.Message, fmt.Sprintf("after the fork this log claims at seq %d", f.want(a)))
		return
	}
	require.EqualValues(t, f.want(a), fe.Details["seq"], "%v", err)
	require.Equal(t, a.pid, fe.Details["project_id"])
	require.Contains(t, fe.Details["where"], where)
	require.Contains(t, fe.Details["anchor"], fmt.Sprintf("project=%s seq=%d ", a.pid, f.want(a)))
	require.Contains(t, fe.Hint, "awr import ")
}

// checkRefused runs verify --anchors (file, git notes) on the forged
// project at a.dir and import --anchors (file, git) of its export, and
// asserts each refuses forgery f; nothing is imported.
func checkRefused(t *testing.T, f forgery, a *anchoredLog) {
	t.Helper()
	ctx := context.Background()
	p, err := project.Open(ctx, a.dir, project.Options{})
	require.NoError(t, err)
	defer p.Close()
	// The forger rebuilds the projections (a forgery that breaks a
	// domain rule cannot be rebuilt, and is left as it is).
	_, _ = p.Replay(ctx, project.ReplayRequest{})
	for _, src := range []struct{ name, file, where string }{{"File", a.file, a.file + ":"}, {"GitNotes", "", "git:"}} {
		t.Run("Verify"+src.name, func(t *testing.T) {
			res, err := p.Verify(ctx, project.VerifyRequest{Anchors: true, AnchorsFile: src.file})
			require.Error(t, err)
			require.NotNil(t, res, "%v", err)
			require.False(t, res.OK)
			requireRefusal(t, f, a, err, res.Anchors, src.where)
		})
	}
	export := filepath.Join(t.TempDir(), "forged.jsonl")
	_, err = p.Export(ctx, project.ExportRequest{Output: export}, nil)
	require.NoError(t, err)
	for _, src := range []struct{ name, arg, where string }{{"File", a.file, a.file + ":"}, {"GitNotes", "git", "git:"}} {
		t.Run("Import"+src.name, func(t *testing.T) {
			dir := filepath.Join(a.root, "restore-"+strings.ToLower(src.name))
			require.NoError(t, os.Mkdir(dir, 0o755))
			q, err := project.Open(ctx, dir, project.Options{})
			require.NoError(t, err)
			defer q.Close()
			res, err := q.Import(ctx, project.ImportRequest{File: export, Anchors: src.arg}, nil)
			require.Error(t, err)
			require.Nil(t, res)
			require.Contains(t, err.Error(), "nothing was imported")
			requireRefusal(t, f, a, err, nil, src.where)
			_, statErr := os.Stat(events.DBPath(dir))
			require.True(t, os.IsNotExist(statErr), "nothing was imported: %v", statErr)
		})
	}
}

// requireHolds asserts that the unforged anchored log passes verify
// --anchors (file, git) and import --anchors of its export: the checks
// the forgeries fail can pass.
func requireHolds(t *testing.T, a *anchoredLog) {
	t.Helper()
	ctx := context.Background()
	p, err := project.Open(ctx, a.dir, project.Options{})
	require.NoError(t, err)
	defer p.Close()
	for _, file := range []string{a.file, ""} {
		res, err := p.Verify(ctx, project.VerifyRequest{Anchors: true, AnchorsFile: file})
		require.NoError(t, err, "anchors %q", file)
		require.Equal(t, 2, res.Anchors.Checked)
		require.Equal(t, a.a2, res.Anchors.Latest.Seq)
	}
	export := filepath.Join(t.TempDir(), "clean.jsonl")
	_, err = p.Export(ctx, project.ExportRequest{Output: export}, nil)
	require.NoError(t, err)
	for i, arg := range []string{a.file, "git"} {
		dir := filepath.Join(a.root, fmt.Sprintf("clean-%d", i))
		require.NoError(t, os.Mkdir(dir, 0o755))
		q, err := project.Open(ctx, dir, project.Options{})
		require.NoError(t, err)
		res, err := q.Import(ctx, project.ImportRequest{File: export, Anchors: arg}, nil)
		require.NoError(t, err, "anchors %s", arg)
		require.True(t, res.Anchors.OK)
		require.Equal(t, a.a2, res.ProjectRevision)
		require.NoError(t, q.Close())
		require.NoError(t, os.RemoveAll(dir))
	}
}

// TestAnchors_RefuseForgeries: each of the twelve forgeries, applied to
// an anchored SQLite log and re-hashed, is refused by verify --anchors
// (anchor file and git notes) and by import --anchors of its export.
func TestAnchors_RefuseForgeries(t *testing.T) {
	t.Parallel()
	base := newAnchoredLog(t, "")
	requireHolds(t, base)
	clean := readLog(t, base.dir)
	for _, f := range forgeries() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			a := copyAnchored(t, base)
			l := &forged{evs: cloneEvents(clean)}
			f.forge(t, l, a)
			rewriteSQLite(t, events.DBPath(a.dir), l.sealed(), l.origin)
			checkRefused(t, f, a)
			if f.name == "ForgedForkOfOwnID" {
				// The forged log no longer accepts writes: a fork of the
				// project's own id forks nothing, the origin row stands.
				ctx := context.Background()
				p, err := project.Open(ctx, a.dir, project.Options{})
				require.NoError(t, err)
				defer p.Close()
				_, err = p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-2", Agent: "mallory"})
				require.Equal(t, fault.ReadOnlyReplica, fault.As(err).Code, "%v", err)
			}
		})
	}
}

// copyAnchored copies the anchored log's repository (its project, log
// and git notes) and anchor file for one forgery.
func copyAnchored(t *testing.T, a *anchoredLog) *anchoredLog {
	t.Helper()
	c := *a
	c.root = filepath.Join(t.TempDir(), "repo")
	out, err := exec.Command("cp", "-a", a.root, c.root).CombinedOutput()
	require.NoError(t, err, "%s", out)
	c.dir = filepath.Join(c.root, "proj")
	c.file = filepath.Join(t.TempDir(), "witness.txt")
	b, err := os.ReadFile(a.file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(c.file, b, 0o644))
	return &c
}

func cloneEvents(evs []*events.Event) []*events.Event {
	out := make([]*events.Event, len(evs))
	for i, e := range evs {
		c := *e
		out[i] = &c
	}
	return out
}
