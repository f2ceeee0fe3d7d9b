package audit_test

import (
	"encoding/json"
	"testing"

	"github.com/awr-dev/awr/internal/audit"
	"github.com/stretchr/testify/require"
)

// plain marks a code span with backticks, as a reader sees one.
func plain(s string) string { return "`" + s + "`" }

func TestFormats(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"md", "html"}, audit.Formats(), "Markdown is the default")
}

func TestTime(t *testing.T) {
	t.Parallel()
	for ms, want := range map[int64]string{
		0:             "1970-01-01T00:00:00.000Z",
		1796000000000: "2026-11-30T00:53:20.000Z",
		1796000000007: "2026-11-30T00:53:20.007Z",
	} {
		require.Equal(t, want, audit.Time(ms), "%d", ms)
	}
}

func TestReport_Intro(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		subject audit.Subject
		want    string
	}{
		{audit.Subject{Kind: audit.SubjectSession, ID: "S-1"},
			"Chain-of-custody report of session S-1 and the chain of sessions it resumed from and that resumed it, as of project_revision 9."},
		{audit.Subject{Kind: audit.SubjectWork, ID: "W-1"},
			"Chain-of-custody report of work item W-1: every session that touched it, as of project_revision 9."},
	} {
		r := &audit.Report{Subject: c.subject, ProjectRevision: 9}
		require.Equal(t, c.want, r.Intro())
	}
}

func TestReport_ProjectLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "P-1", (&audit.Report{ProjectID: "P-1"}).ProjectLine())
	require.Equal(t, "shop (P-1)", (&audit.Report{ProjectID: "P-1", ProjectName: "shop"}).ProjectLine())
}

func TestChain_Verdict(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		chain audit.Chain
		want  string
	}{
		"Empty":    {audit.Chain{Verified: true}, "empty log, nothing to verify"},
		"Verified": {audit.Chain{Verified: true, Through: 12}, "chain intact through seq 12 (seq 1..12 contiguous, every hash recomputes, the log's rules hold), not anchored: a rewritten and re-hashed history would also pass; run `awr anchor`, then `awr verify --anchors`"},
		"Broken":   {audit.Chain{Through: 12, FirstBadSeq: 7, Problem: "hash does not recompute"}, "NOT VERIFIED: seq 7: hash does not recompute"},
	} {
		require.Equal(t, c.want, c.chain.Verdict(), name)
	}
}

func TestWorkItem_Line(t *testing.T) {
	t.Parallel()
	require.Equal(t, "no source declares it at this revision", audit.WorkItem{Key: "W-1"}.Line())
	require.Equal(t, "Ship the cart (status doing, from tasks.md)",
		audit.WorkItem{Key: "W-1", Title: "Ship\n the   cart", Status: "doing", Source: "tasks.md"}.Line(), "the title on one line")
}

func TestSession_AgentLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    audit.Session
		want string
	}{
		{audit.Session{Agent: "builder"}, "builder"},
		{audit.Session{Agent: "builder", Provider: "anthropic"}, "builder (anthropic)"},
		{audit.Session{Agent: "builder", Model: "opus"}, "builder (opus)"},
		{audit.Session{Agent: "builder", Provider: "anthropic", Model: "opus"}, "builder (anthropic opus)"},
	} {
		require.Equal(t, c.want, c.s.AgentLine())
	}
}

func TestClaimEvent_Lease(t *testing.T) {
	t.Parallel()
	requireLines(t, func(x audit.ClaimEvent) string { return x.Lease() }, []lineCase[audit.ClaimEvent]{
		{"AcquiredForever", audit.ClaimEvent{Event: audit.ClaimAcquired}, "no expiry"},
		{"RenewedForever", audit.ClaimEvent{Event: audit.ClaimRenewed}, "no expiry"},
		{"Released", audit.ClaimEvent{Event: audit.ClaimReleased}, ""},
		{"WithLength", audit.ClaimEvent{Event: audit.ClaimAcquired, ExpiresAt: "2026-11-30T01:23:20.000Z", TTLms: 1800000}, "until 2026-11-30T01:23:20.000Z (30m0s)"},
		{"WithoutLength", audit.ClaimEvent{Event: audit.ClaimRenewed, ExpiresAt: "2026-11-30T01:23:20.000Z"}, "until 2026-11-30T01:23:20.000Z"},
	})
}

func TestClaimEvent_Details(t *testing.T) {
	t.Parallel()
	requireLines(t, func(x audit.ClaimEvent) string { return x.Details(plain) }, []lineCase[audit.ClaimEvent]{
		{"ReleasedBare", audit.ClaimEvent{Event: audit.ClaimReleased}, ""},
		{"Acquired", audit.ClaimEvent{Event: audit.ClaimAcquired, Agent: "builder", FencingToken: 3, ExpiresAt: "2026-11-30T01:23:20.000Z", TTLms: 60000},
			", agent builder, fencing token 3, lease until 2026-11-30T01:23:20.000Z (1m0s)"},
		{"Moved", audit.ClaimEvent{Event: audit.ClaimAcquired, FencingToken: 4, MovedFrom: "S-1"}, ", fencing token 4, lease no expiry, moved from session `S-1`"},
		{"ReleasedWithAll", audit.ClaimEvent{Event: audit.ClaimReleased, FencingToken: 4, Reason: "moved", ToSession: "S-2", Note: "hand\nover"},
			", fencing token 4, reason moved, to session `S-2`, note: hand over"},
	})
}

func TestCheckpoint_ContextLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cp   audit.Checkpoint
		want string
	}{
		{audit.Checkpoint{}, "no context hash given"},
		{audit.Checkpoint{ContextHashNote: "compiled elsewhere"}, "no context hash given (compiled elsewhere)"},
		{audit.Checkpoint{ContextHash: "h1", ContextHashVerified: true, ContextHashNote: "ignored"}, "`h1`, verified"},
		{audit.Checkpoint{ContextHash: "h1"}, "`h1`, not verified"},
		{audit.Checkpoint{ContextHash: "h1", ContextHashNote: "never compiled here"}, "`h1`, not verified (never compiled here)"},
	} {
		require.Equal(t, c.want, c.cp.ContextLine(plain))
	}
}

func TestChange_Line(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ch   audit.Change
		want string
	}{
		{audit.Change{Op: "open", ID: "L-1", Kind: "loop", Text: "Why?"}, "opened loop `L-1`: Why?"},
		{audit.Change{Op: "open", ID: "D-2", Kind: "decision", Text: "Use SQLite", Supersedes: "D-1"}, "opened decision `D-2`: Use SQLite, replacing `D-1`"},
		{audit.Change{Op: "resolve", ID: "L-1", Note: "the cache"}, "resolved `L-1` (the cache)"},
		{audit.Change{Op: "drop", ID: "L-2"}, "dropped `L-2`"},
		{audit.Change{Op: "confirm", ID: "H-1", Note: "measured"}, "confirmed `H-1` (measured)"},
		{audit.Change{Op: "retract", ID: "F-1"}, "retracted `F-1`"},
		{audit.Change{Op: "supersede", ID: "D-1", By: "D-2"}, "superseded `D-1`, by `D-2`"},
		{audit.Change{Op: "rename", ID: "X-1"}, "rename `X-1`"},
	} {
		require.Equal(t, c.want, c.ch.Line(plain))
	}
}

func TestKnowledge_Groups(t *testing.T) {
	t.Parallel()
	require.True(t, audit.Knowledge{}.Empty())
	require.Empty(t, audit.Knowledge{}.Groups())
	k := audit.Knowledge{Hypotheses: []audit.Item{{ID: "H-1", Text: "h"}}, OpenLoops: []audit.Item{{ID: "L-1", Text: "l"}, {ID: "L-2", Text: "m"}}}
	require.False(t, k.Empty())
	require.Equal(t, []audit.Group{
		{Name: "open loops", Items: []audit.Item{{ID: "L-1", Text: "l"}, {ID: "L-2", Text: "m"}}},
		{Name: "hypotheses", Items: []audit.Item{{ID: "H-1", Text: "h"}}},
	}, k.Groups(), "a fixed order, empty kinds left out")
	all := audit.Knowledge{OpenLoops: []audit.Item{{ID: "L-1"}}, Decisions: []audit.Item{{ID: "D-1"}}, Facts: []audit.Item{{ID: "F-1"}}, Hypotheses: []audit.Item{{ID: "H-1"}}}
	var names []string
	for _, g := range all.Groups() {
		names = append(names, g.Name)
	}
	require.Equal(t, []string{"open loops", "decisions", "facts", "hypotheses"}, names)
}

func TestRepo_Line(t *testing.T) {
	t.Parallel()
	requireLines(t, func(x audit.Repo) string { return x.Line(plain) }, []lineCase[audit.Repo]{
		{"Clean", audit.Repo{Head: "c0ffee", Branch: "main"}, "branch `main`, commit `c0ffee`, clean"},
		{"NoBranch", audit.Repo{Head: "c0ffee"}, "commit `c0ffee`, clean"},
		{"Dirty", audit.Repo{Head: "c0ffee", Dirty: true}, "commit `c0ffee`, dirty"},
		{"DirtyFingerprint", audit.Repo{Head: "c0ffee", Dirty: true, DirtyFingerprint: "fp"}, "commit `c0ffee`, dirty `fp`"},
		{"NoCommit", audit.Repo{Branch: "main"}, "branch `main`, commit none, clean"},
		{"Unverifiable", audit.Repo{Unverifiable: "not a git repository"}, "unverifiable: not a git repository"},
		{"HeadButUnverifiable", audit.Repo{Head: "c0ffee", Unverifiable: "status timed out"}, "commit `c0ffee`, clean, unverifiable: status timed out"},
	})
}

func TestFile_Line(t *testing.T) {
	t.Parallel()
	require.Equal(t, "modified `a.go`", audit.File{Path: "a.go", Status: "modified"}.Line(plain))
	require.Equal(t, "renamed `b.go` (from `a.go`)", audit.File{Path: "b.go", Status: "renamed", From: "a.go"}.Line(plain))
}

func TestResume_ClaimLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "not moved", audit.Resume{}.ClaimLine(plain))
	require.Equal(t, "moved: `C-1` released at seq 7, `C-2` acquired at seq 8 with fencing token 2",
		audit.Resume{ClaimMoved: &audit.MovedClaim{FromClaim: "C-1", ToClaim: "C-2", FencingToken: 2, ReleasedSeq: 7, AcquiredSeq: 8}}.ClaimLine(plain))
}

func TestRestatementField_Line(t *testing.T) {
	t.Parallel()
	require.Equal(t, "goal: match", audit.RestatementField{Field: "goal", Status: "match"}.Line())
	require.Equal(t, `next_action: mismatch, recorded "run the tests", stated "ship \"it\""`,
		audit.RestatementField{Field: "next_action", Status: "mismatch", Expected: "run the\ntests", Stated: `ship "it"`}.Line(), "quoted, on one line")
}

func TestHostEvent_Details(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", audit.HostEvent{}.Details(plain))
	require.Equal(t, ", compacted", audit.HostEvent{Detail: "compacted"}.Details(plain))
	require.Equal(t, ", answered context `h9`", audit.HostEvent{Answer: "context", ContextHash: "h9"}.Details(plain))
	require.Equal(t, ", source=clear, answered block", audit.HostEvent{Detail: "source=clear", Answer: "block"}.Details(plain))
}

func TestExecution_ClaimLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, ", no claim", audit.Execution{}.ClaimLine(plain))
	require.Equal(t, ", claim `C-1` (fencing token 3)", audit.Execution{ClaimID: "C-1", FencingToken: 3}.ClaimLine(plain))
}

func TestExecFinished_Line(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f    audit.ExecFinished
		want string
	}{
		{audit.ExecFinished{DurationMs: 1500}, "exit 0 after 1.5s"},
		{audit.ExecFinished{ExitCode: -1, DurationMs: 61000, Signal: "SIGKILL"}, "exit -1 after 1m1s, signal SIGKILL"},
		{audit.ExecFinished{ExitCode: 127, Error: "no such\nprogram"}, "exit 127 after 0s, error: no such program"},
	} {
		require.Equal(t, c.want, c.f.Line())
	}
}

func TestEvidence_RepoLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", audit.Evidence{}.RepoLine(plain))
	require.Equal(t, " at commit `c0ffee`, clean", audit.Evidence{Repo: &audit.Repo{Head: "c0ffee"}}.RepoLine(plain))
}

func TestArgv_Quoting(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		argv []string
		want string
	}{
		{nil, ""},
		{[]string{"go", "test", "./...", "-run=TestX", "a:b,c+d@e%f"}, "go test ./... -run=TestX a:b,c+d@e%f"},
		{[]string{"echo", "two words", "$HOME", "a;b", "`x`", "*"}, `echo 'two words' '$HOME' 'a;b' '` + "`x`" + `' '*'`},
		{[]string{"printf", "line\nbreak", "tab\there"}, "printf 'line\nbreak' 'tab\there'"},
	} {
		require.Equal(t, c.want, audit.Argv(c.argv))
	}
}

// TestReport_JSON pins the report's field names, the data `awr audit
// --json` gives: empty sections are empty lists, optional fields absent.
func TestReport_JSON(t *testing.T) {
	t.Parallel()
	r := &audit.Report{
		Subject: audit.Subject{Kind: audit.SubjectSession, ID: "S-1"}, ProjectID: "P-1", ProjectRevision: 2,
		HeadHash: "ab", HeadAt: audit.Time(0), Chain: audit.Chain{Verified: true, Through: 2},
		Work: []audit.WorkItem{}, Sessions: []audit.Session{{Started: audit.Ref{Seq: 1, Hash: "aa", At: audit.Time(0)}, ID: "S-1", Work: "W-1", Agent: "a"}},
		Claims: []audit.ClaimEvent{}, Checkpoints: []audit.Checkpoint{}, Resumes: []audit.Resume{}, Restatements: []audit.Restatement{},
		Bindings: []audit.Binding{}, HostEvents: []audit.HostEvent{}, Executions: []audit.Execution{}, Evidence: []audit.Evidence{}, Verifications: []audit.Verification{},
	}
	raw, err := json.Marshal(r)
	require.NoError(t, err)
	require.JSONEq(t, `{
		"subject": {"kind": "session", "id": "S-1"}, "project_id": "P-1", "project_revision": 2,
		"head_hash": "ab", "head_at": "1970-01-01T00:00:00.000Z",
		"chain": {"verified": true, "anchored": false, "through_seq": 2},
		"work": [],
		"sessions": [{"started": {"seq": 1, "hash": "aa", "at": "1970-01-01T00:00:00.000Z"}, "id": "S-1", "work": "W-1", "agent": "a"}],
		"claims": [], "checkpoints": [], "resumes": [], "restatements": [], "bindings": [], "host_events": [],
		"executions": [], "evidence": [], "verifications": []
	}`, string(raw))
}

// lineCase is a value (in) and the line it renders as (want); name says
// which case failed.
type lineCase[T any] struct {
	name string
	in   T
	want string
}

// requireLines requires that line renders each case's value as the case
// wants.
func requireLines[T any](t *testing.T, line func(T) string, cases []lineCase[T]) {
	t.Helper()
	for _, c := range cases {
		require.Equal(t, c.want, line(c.in), c.name)
	}
}
