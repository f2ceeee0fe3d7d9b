package audit_test

import (
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/audit"
	"github.com/stretchr/testify/require"
)

// sections are the report's sections, in the order both renderings give
// them.
var sections = []string{"Sessions", "Claims", "Checkpoints", "Resumes", "Restatement checks", "Host bindings", "Host events",
	"Executions", "Evidence", "Work verified"}

// ref is the event of seq n.
func ref(n int64) audit.Ref {
	return audit.Ref{Seq: n, Hash: strings.Repeat(string(rune('a'+n%6)), 8), At: audit.Time(1796000000000 + n*1000), Actor: "builder"}
}

// full is a small report with one entry in every section, in plain words.
func full() *audit.Report {
	repo := &audit.Repo{Head: "c0ffee", Branch: "main", Dirty: true, DirtyFingerprint: "fp1",
		DirtyFiles: []audit.File{{Path: "cart.go", Status: "modified"}}, FilesChanged: []audit.File{{Path: "b.go", Status: "renamed", From: "a.go"}}, FilesSince: "session_start"}
	return &audit.Report{
		Subject: audit.Subject{Kind: audit.SubjectWork, ID: "CART-1"}, ProjectID: "P-1", ProjectName: "shop", ProjectRevision: 12,
		HeadHash: "ffff", HeadAt: audit.Time(1796000012000), Chain: audit.Chain{Verified: true, Through: 12},
		Work: []audit.WorkItem{{Key: "CART-1", Title: "Persist the cart", Status: "doing", Source: "tasks.md"}},
		Sessions: []audit.Session{{Started: ref(2), ID: "S-1", Work: "CART-1", Agent: "builder", Provider: "anthropic", Model: "opus",
			Workdir: "/w", ResumedBy: []string{"S-2"}, Repo: repo, Ended: &audit.SessionEnd{Ref: ref(7), Outcome: "interrupted", Reason: "terminal closed"}}},
		Claims: []audit.ClaimEvent{{Ref: ref(3), Event: audit.ClaimAcquired, ClaimID: "C-1", Work: "CART-1", Session: "S-1", Agent: "builder", FencingToken: 1,
			ExpiresAt: audit.Time(1796001800000), TTLms: 1800000}},
		Checkpoints: []audit.Checkpoint{{Ref: ref(4), ID: "K-1", Session: "S-1", Work: "CART-1", Agent: "builder", Digest: "Saved the cart\nin SQLite",
			NextAction: "Restore it at sign-in", ContextHash: "h1", ContextHashVerified: true, OpenLoopTexts: []string{"Old loop"},
			Changes: []audit.Change{{Op: "open", ID: "L-1", Kind: "loop", Text: "Which table?"}},
			Kept:    audit.Knowledge{Decisions: []audit.Item{{ID: "D-1", Text: "Use SQLite"}}}, Repo: &audit.Repo{Unverifiable: "not a git repository"}}},
		Resumes: []audit.Resume{{Ref: ref(8), Session: "S-2", FromSession: "S-1", Work: "CART-1", Agent: "reviewer", CheckpointID: "K-1",
			ExternalSession: "claude:c-9", ClaimMoved: &audit.MovedClaim{FromClaim: "C-1", ToClaim: "C-2", FencingToken: 2, ReleasedSeq: 8, AcquiredSeq: 8},
			PredecessorEnded: "interrupted", Carried: audit.Knowledge{OpenLoops: []audit.Item{{ID: "L-1", Text: "Which table?"}}}}},
		Restatements: []audit.Restatement{{Ref: ref(9), Session: "S-2", Work: "CART-1", CheckpointID: "K-1", Verdict: "verified",
			Items: []audit.RestatementField{{Field: "next_action", Status: "match"}}}},
		Bindings: []audit.Binding{{Ref: ref(9), Client: "claude", ExternalSession: "claude:c-9", Session: "S-2", Work: "CART-1", CheckpointID: "K-1", ContinuesFrom: "claude:c-8"}},
		HostEvents: []audit.HostEvent{{Ref: ref(10), Client: "claude", ExternalSession: "claude:c-9", Session: "S-2", Event: "session_start", HostEvent: "SessionStart",
			Detail: "source=resume", Answer: "context", ContextHash: "h2"}},
		Executions: []audit.Execution{{Started: ref(10), ID: "X-1", Work: "CART-1", Session: "S-2", Key: "test", Purpose: "run the tests",
			Argv: []string{"go", "test", "./..."}, Cwd: "/w", ClaimID: "C-2", FencingToken: 2,
			Finished: &audit.ExecFinished{Ref: ref(11), DurationMs: 2500, StdoutSHA256: "s1", StdoutBytes: 10, StderrSHA256: "s2"}}},
		Evidence: []audit.Evidence{{Ref: ref(11), ID: "E-1", Work: "CART-1", Criterion: "tests pass", Basis: "execution", Level: "ran", Passed: true,
			Detail: "exit 0", Repo: &audit.Repo{Head: "c0ffee"}}},
		Verifications: []audit.Verification{{Ref: ref(12), Work: "CART-1", Session: "S-2", Level: "ran",
			Criteria: []audit.Criterion{{Criterion: "tests pass", EvidenceID: "E-1", Level: "ran"}}, Repo: &audit.Repo{Head: "c0ffee"}}},
	}
}

// empty is the report of a subject with nothing in the log.
func empty() *audit.Report {
	return &audit.Report{Subject: audit.Subject{Kind: audit.SubjectSession, ID: "S-9"}, ProjectID: "P-1"}
}

// TestMarkdown_Full pins the whole Markdown rendering of a report with
// one entry in every section.
func TestMarkdown_Full(t *testing.T) {
	t.Parallel()
	require.Equal(t, wantFull, string(audit.Markdown(full())))
}

// TestMarkdown_Empty: an empty report has every section, each saying
// there is nothing, and an empty chain.
func TestMarkdown_Empty(t *testing.T) {
	t.Parallel()
	require.Equal(t, wantEmpty, string(audit.Markdown(empty())))
}

// wantFull is the document, one line per string.
var wantFull = doc(
	"# Audit of work `CART-1`",
	"",
	"Chain-of-custody report of work item CART-1: every session that touched it, as of project_revision 12.",
	"",
	"- project: shop (P-1)",
	"- made at: project_revision 12, head hash `ffff`, 2026-11-30T00:53:32.000Z",
	"- chain: chain intact through seq 12 (seq 1..12 contiguous, every hash recomputes, the log's rules hold), not anchored: a rewritten and re-hashed history would also pass; run `awr anchor`, then `awr verify --anchors`",
	"- work item `CART-1`: Persist the cart (status doing, from tasks.md)",
	"- sessions: 1; claim events: 1; checkpoints: 1; resumes: 1; restatement checks: 1",
	"",
	"Each entry names its event as `seq N · hash`; `awr log --since N-1 --until N --json` shows it whole.",
	"",
	"## Sessions",
	"",
	"### Session `S-1`",
	"",
	"- started: seq 2 · `cccccccc` · 2026-11-30T00:53:22.000Z by builder",
	"- agent: builder (anthropic opus)",
	"- work: `CART-1`",
	"- workdir: `/w`",
	"- resumed by: `S-2`",
	"- repository at start: branch `main`, commit `c0ffee`, dirty `fp1`",
	"  - dirty files:",
	"    - modified `cart.go`",
	"  - files changed since the session started:",
	"    - renamed `b.go` (from `a.go`)",
	"- ended: interrupted (terminal closed) at seq 7 · `bbbbbbbb` · 2026-11-30T00:53:27.000Z by builder",
	"",
	"## Claims",
	"",
	"- seq 3 · `dddddddd` · 2026-11-30T00:53:23.000Z by builder: **acquired** claim `C-1` on `CART-1`, session `S-1`, agent builder, fencing token 1, lease until 2026-11-30T01:23:20.000Z (30m0s)",
	"",
	"## Checkpoints",
	"",
	"### Checkpoint `K-1`",
	"",
	"- recorded: seq 4 · `eeeeeeee` · 2026-11-30T00:53:24.000Z by builder",
	"- session: `S-1`, agent builder, work `CART-1`",
	"- digest: Saved the cart",
	"  in SQLite",
	"- next action: Restore it at sign-in",
	"- context: `h1`, verified",
	"- open loops as written:",
	"  - Old loop",
	"- changes:",
	"  - opened loop `L-1`: Which table?",
	"- kept in force:",
	"  - decisions:",
	"    - `D-1`: Use SQLite",
	"- repository: unverifiable: not a git repository",
	"",
	"## Resumes",
	"",
	"### `S-2` resumed `S-1`",
	"",
	"- resumed: seq 8 · `cccccccc` · 2026-11-30T00:53:28.000Z by builder",
	"- agent: reviewer",
	"- work: `CART-1`",
	"- checkpoint inherited: `K-1`",
	"- for conversation: `claude:c-9`",
	"- claim: moved: `C-1` released at seq 8, `C-2` acquired at seq 8 with fencing token 2",
	"- predecessor ended: interrupted",
	"- carried:",
	"  - open loops:",
	"    - `L-1`: Which table?",
	"",
	"## Restatement checks",
	"",
	"### Restatement of `S-2`: verified",
	"",
	"- checked: seq 9 · `dddddddd` · 2026-11-30T00:53:29.000Z by builder",
	"- against checkpoint: `K-1`",
	"- fields:",
	"  - next_action: match",
	"",
	"## Host bindings",
	"",
	"- seq 9 · `dddddddd` · 2026-11-30T00:53:29.000Z by builder: claude conversation `claude:c-9` bound to session `S-2` on `CART-1`, at checkpoint `K-1`, continues `claude:c-8`",
	"",
	"## Host events",
	"",
	"- seq 10 · `eeeeeeee` · 2026-11-30T00:53:30.000Z by builder: claude session_start (SessionStart) for `claude:c-9`, session `S-2`, source=resume, answered context `h2`",
	"",
	"## Executions",
	"",
	"### Execution `X-1`",
	"",
	"- started: seq 10 · `eeeeeeee` · 2026-11-30T00:53:30.000Z by builder",
	"- key: `test`, purpose: run the tests",
	"- command: `go test ./...` in `/w`",
	"- session: `S-2`, work `CART-1`, claim `C-2` (fencing token 2)",
	"- repository before: not recorded",
	"- finished: exit 0 after 2.5s at seq 11 · `ffffffff` · 2026-11-30T00:53:31.000Z by builder",
	"- stdout: 10 bytes, `s1`",
	"- stderr: 0 bytes, `s2`",
	"- repository after: not recorded",
	"",
	"## Evidence",
	"",
	"- seq 11 · `ffffffff` · 2026-11-30T00:53:31.000Z by builder: evidence `E-1` on `CART-1`, criterion \"tests pass\": execution, ran, passed: exit 0 at commit `c0ffee`, clean",
	"",
	"## Work verified",
	"",
	"- seq 12 · `aaaaaaaa` · 2026-11-30T00:53:32.000Z by builder: `CART-1` verified by session `S-2` at level ran, repository commit `c0ffee`, clean",
	"  - \"tests pass\": evidence `E-1` (ran)",
)

// wantEmpty is the document, one line per string.
var wantEmpty = doc(
	"# Audit of session `S-9`",
	"",
	"Chain-of-custody report of session S-9 and the chain of sessions it resumed from and that resumed it, as of project_revision 0.",
	"",
	"- project: P-1",
	"- made at: project_revision 0, head hash `none`",
	"- chain: empty log, nothing to verify",
	"- sessions: 0; claim events: 0; checkpoints: 0; resumes: 0; restatement checks: 0",
	"",
	"Each entry names its event as `seq N · hash`; `awr log --since N-1 --until N --json` shows it whole.",
	"",
	"## Sessions",
	"",
	"None at this revision.",
	"",
	"## Claims",
	"",
	"None at this revision.",
	"",
	"## Checkpoints",
	"",
	"None at this revision.",
	"",
	"## Resumes",
	"",
	"None at this revision.",
	"",
	"## Restatement checks",
	"",
	"None at this revision.",
	"",
	"## Host bindings",
	"",
	"None at this revision.",
	"",
	"## Host events",
	"",
	"None at this revision.",
	"",
	"## Executions",
	"",
	"None at this revision.",
	"",
	"## Evidence",
	"",
	"None at this revision.",
	"",
	"## Work verified",
	"",
	"None at this revision.",
)

// doc joins lines into a document ending in a newline.
func doc(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// TestHTML_Full: the page has every section in order, each entry of the
// report, balanced tags, and nothing that loads or runs.
func TestHTML_Full(t *testing.T) {
	t.Parallel()
	page := string(audit.HTML(full()))
	require.Equal(t, sections, headings(page, "h2"))
	require.Equal(t, []string{"Session <code>S-1</code>", "Checkpoint <code>K-1</code>", "<code>S-2</code> resumed <code>S-1</code>",
		"Restatement of <code>S-2</code>: verified", "Execution <code>X-1</code>"}, headings(page, "h3"))
	require.NotContains(t, page, "None at this revision.")
	for _, line := range []string{
		"<title>Audit of work CART-1</title>",
		"<h1>Audit of work <code>CART-1</code></h1>",
		"<li>chain: <span class=\"ok\">chain intact through seq 12 (seq 1..12 contiguous, every hash recomputes, the log&#39;s rules hold), not anchored: a rewritten and re-hashed history would also pass; run `awr anchor`, then `awr verify --anchors`</span></li>",
		"<li>work item <code>CART-1</code>: Persist the cart (status doing, from tasks.md)</li>",
		`<li>started: <span class="ref">seq 2 · <code>cccccccc</code> · 2026-11-30T00:53:22.000Z by builder</span></li>`,
		"<li>repository at start: branch <code>main</code>, commit <code>c0ffee</code>, dirty <code>fp1</code>\n<ul>\n<li>dirty files:\n<ul>\n<li>modified <code>cart.go</code></li>\n</ul></li>\n" +
			"<li>files changed since the session started:\n<ul>\n<li>renamed <code>b.go</code> (from <code>a.go</code>)</li>\n</ul></li>\n</ul></li>",
		`<li><span class="ref">seq 3 · <code>dddddddd</code> · 2026-11-30T00:53:23.000Z by builder</span>: <strong>acquired</strong> claim <code>C-1</code> on <code>CART-1</code>, session <code>S-1</code>, agent builder, fencing token 1, lease until 2026-11-30T01:23:20.000Z (30m0s)</li>`,
		"<li>digest: <span class=\"text\">Saved the cart\nin SQLite</span></li>",
		"<li>open loops as written:\n<ul>\n<li class=\"text\">Old loop</li>\n</ul></li>",
		"<li>kept in force:\n<ul>\n<li>decisions:\n<ul>\n<li class=\"text\"><code>D-1</code>: Use SQLite</li>\n</ul></li>\n</ul></li>",
		"<li>claim: moved: <code>C-1</code> released at seq 8, <code>C-2</code> acquired at seq 8 with fencing token 2</li>",
		"<li>fields:\n<ul>\n<li class=\"text\">next_action: match</li>\n</ul></li>",
		"claude conversation <code>claude:c-9</code> bound to session <code>S-2</code> on <code>CART-1</code>, at checkpoint <code>K-1</code>, continues <code>claude:c-8</code></li>",
		"claude session_start (SessionStart) for <code>claude:c-9</code>, session <code>S-2</code>, source=resume, answered context <code>h2</code></li>",
		"<li>command: <code>go test ./...</code> in <code>/w</code></li>",
		"<li>stdout: 10 bytes, <code>s1</code></li>",
		"evidence <code>E-1</code> on <code>CART-1</code>, criterion &#34;tests pass&#34;: execution, ran, passed: exit 0 at commit <code>c0ffee</code>, clean</li>",
		"<li>&#34;tests pass&#34;: evidence <code>E-1</code> (ran)</li>",
	} {
		require.Contains(t, page, line)
	}
	requireBalanced(t, page)
	require.True(t, strings.HasSuffix(page, "</body>\n</html>\n"))
}

// TestHTML_Empty: an empty report has every section, each saying there
// is nothing.
func TestHTML_Empty(t *testing.T) {
	t.Parallel()
	r := empty()
	r.Chain.Verified = true
	page := string(audit.HTML(r))
	require.Equal(t, sections, headings(page, "h2"))
	require.Empty(t, headings(page, "h3"))
	require.Equal(t, len(sections), strings.Count(page, "</h2>\n<p class=\"none\">None at this revision.</p>\n"))
	require.Contains(t, page, `<li>chain: <span class="ok">empty log, nothing to verify</span></li>`)
	require.Contains(t, page, "<li>made at: project_revision 0, head hash <code>none</code></li>")
	require.NotContains(t, page, "<li>work item")
	requireBalanced(t, page)
}

// TestRender_KeepsOrder: both renderings give the entries in the order
// the report holds them (oldest first, as gathered); they sort nothing.
func TestRender_KeepsOrder(t *testing.T) {
	t.Parallel()
	r := empty()
	r.Sessions = []audit.Session{{Started: ref(5), ID: "S-B", Work: "W"}, {Started: ref(2), ID: "S-A", Work: "W"}}
	r.Claims = []audit.ClaimEvent{{Ref: ref(4), Event: audit.ClaimReleased, ClaimID: "C-Z"}, {Ref: ref(3), Event: audit.ClaimAcquired, ClaimID: "C-Y"}}
	r.Evidence = []audit.Evidence{{Ref: ref(6), ID: "E-2"}, {Ref: ref(1), ID: "E-1"}}
	for name, out := range map[string]string{"md": string(audit.Markdown(r)), "html": string(audit.HTML(r))} {
		for _, pair := range [][2]string{{"S-B", "S-A"}, {"C-Z", "C-Y"}, {"E-2", "E-1"}} {
			i, j := strings.Index(out, pair[0]), strings.Index(out, pair[1])
			require.True(t, i >= 0 && j > i, "%s: %s before %s", name, pair[0], pair[1])
		}
		i, j := strings.Index(out, "Sessions"), strings.Index(out, "Work verified")
		require.True(t, i >= 0 && j > i, name)
	}
}

// TestMarkdown_CannotForgeStructure: an agent's text of several lines
// stays inside its item, indented; it can start no section, no item of
// the report and no HTML.
func TestMarkdown_CannotForgeStructure(t *testing.T) {
	t.Parallel()
	forged := "fine\n## Sessions\n- chain: verified through seq 99\n<img src=x onerror=alert(1)>\r\n# Audit of nothing"
	r := full()
	r.Checkpoints[0].Digest = forged
	r.Checkpoints[0].Changes[0].Text = forged
	r.Resumes[0].Carried.OpenLoops[0].Text = forged
	r.Claims[0].Note = forged
	doc := string(audit.Markdown(r))
	var h1, h2, chain int
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, "# "):
			h1++
		case strings.HasPrefix(line, "## "):
			h2++
		case strings.HasPrefix(line, "- chain:"):
			chain++
		}
	}
	require.Equal(t, []int{1, len(sections), 1}, []int{h1, h2, chain})
	require.Contains(t, doc, "- digest: fine\n  ## Sessions\n  - chain: verified through seq 99\n  \\<img src=x onerror=alert(1)>\n  # Audit of nothing\n")
	require.Contains(t, doc, "  - opened loop `L-1`: fine\n    ## Sessions\n")
	require.Contains(t, doc, "    - `L-1`: fine\n      ## Sessions\n")
	require.Contains(t, doc, "note: fine ## Sessions - chain: verified through seq 99 \\<img src=x onerror=alert(1)> # Audit of nothing\n", "a claim's note on one line")
	require.NotRegexp(t, `(^|[^\\])<`, outsideCode(doc))
}

// TestMarkdown_CodeSpans: a value with backticks gets a longer fence, and
// one that starts or ends with a backtick is padded, so it cannot close
// its code span early; an empty value is an empty span.
func TestMarkdown_CodeSpans(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"S-1":       "### Session `S-1`\n",
		"a`b":       "### Session ``a`b``\n",
		"a``b`c":    "### Session ```a``b`c```\n",
		"`edge":     "### Session `` `edge ``\n",
		"edge`":     "### Session `` edge` ``\n",
		"<b>x</b>":  "### Session `<b>x</b>`\n",
		"** *_[x]_": "### Session `** *_[x]_`\n",
	} {
		r := empty()
		r.Sessions = []audit.Session{{Started: ref(1), ID: id, Work: "W"}}
		require.Contains(t, string(audit.Markdown(r)), want, "%q", id)
	}
	r := empty()
	r.Sessions = []audit.Session{{Started: ref(1), ID: "", Work: "W"}}
	require.Contains(t, string(audit.Markdown(r)), "### Session ``\n")
}

// TestRender_TerminalEscapes: a report printed to a terminal (`awr audit`
// writes it byte for byte) carries no control character but its own
// newlines: an escape sequence, a carriage return or a bidirectional
// control an agent wrote shows as text.
func TestRender_TerminalEscapes(t *testing.T) {
	t.Parallel()
	evil := "clear\x1b[2J\x1b]0;owned\x07 back\rover \u202egnp.exe\u2028next\x00nul\x7fdel"
	r := full()
	r.ProjectName = evil
	r.Work[0].Title = evil
	r.Sessions[0].Agent = evil
	r.Checkpoints[0].Digest = evil
	r.Checkpoints[0].NextAction = evil
	r.Claims[0].Note = evil
	r.Executions[0].Argv = []string{"sh", "-c", evil}
	r.Evidence[0].Detail = evil
	for name, out := range map[string]string{"md": string(audit.Markdown(r)), "html": string(audit.HTML(r))} {
		for i, c := range []rune(out) {
			if c == '\n' || c == '\t' {
				continue
			}
			require.False(t, c < 0x20 || c == 0x7f || c == '\u202e' || c == '\u2028', "%s: %q at rune %d", name, c, i)
		}
		require.Contains(t, out, `clear\x1b[2J\x1b]0;owned\x07 back\x0dover \u202egnp.exe\u2028next\x00nul\x7fdel`, name)
	}
}

// headings returns the text of every <tag> heading of page, in order.
func headings(page, tag string) []string {
	var out []string
	for _, part := range strings.Split(page, "<"+tag+">")[1:] {
		out = append(out, part[:strings.Index(part, "</"+tag+">")])
	}
	return out
}

// requireBalanced checks that every element the page opens it closes.
func requireBalanced(t *testing.T, page string) {
	t.Helper()
	for _, tag := range []string{"html", "head", "body", "h1", "h2", "h3", "ul", "li", "p", "span", "code", "strong", "style", "title"} {
		open := strings.Count(page, "<"+tag+">") + strings.Count(page, "<"+tag+" ")
		require.Equal(t, open, strings.Count(page, "</"+tag+">"), "<%s>", tag)
	}
}
