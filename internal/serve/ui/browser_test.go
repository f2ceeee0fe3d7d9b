package ui_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/awr-dev/awr/events"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

var updateScreenshots = flag.Bool("update-screenshots", false, "write a PNG of each view of the page to docs/img/ (the test compares the DOM, never pixels)")

// chromium returns the path of Debian's chromium. Without it the browser
// test is skipped on a developer's machine and fails in CI (CI set), where
// .ci/run installs it.
func chromium(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is not installed, and CI=%s: .ci/run installs Debian's chromium package", os.Getenv("CI"))
		}
		t.Skip("chromium is not installed (apt-get install chromium); CI runs this test")
	}
	return path
}

// TestBrowser_Page drives the page of a real `awr ui` on a real project in
// headless Chromium: the timeline and the verification on load, the
// slider against `--at`, an event's detail against `awr log --json`, the
// filters against `awr log`'s, an event appended by another process
// appearing live, a tampered log shown as failed, and exit 0 on SIGINT.
func TestBrowser_Page(t *testing.T) {
	browser := chromium(t)
	f := newFixture(t)
	srv := f.serve()
	all := f.log()
	head := int64(len(all))
	require.Equal(t, head, all[len(all)-1].Seq)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bctx := launch(t, ctx,
		chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900), chromedp.Flag("hide-scrollbars", true))
	run := func(actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		require.NoError(t, chromedp.Do(bctx, actions...))
	}
	wait := func(what, expr string) { t.Helper(); jsWait(t, bctx, what, expr) }
	eval := func(expr string, v any) { t.Helper(); jsEval(t, bctx, expr, v) }
	shot := func(name string) {
		t.Helper()
		if !*updateScreenshots {
			return
		}
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(testkit.Path("docs", "img"), 0o755))
		require.NoError(t, os.WriteFile(testkit.Path("docs", "img", name), png, 0o644))
	}
	marks := func() []int64 {
		t.Helper()
		var out []int64
		eval(`[...document.querySelectorAll("#timeline .mark")].map(m => Number(m.dataset.seq)).sort((a, b) => a - b)`, &out)
		return out
	}
	rows := func() []string {
		t.Helper()
		var out []string
		eval(`[...document.querySelectorAll("#timeline .row")].map(r => r.dataset.work)`, &out)
		return out
	}
	choose := func(id, value string) {
		t.Helper()
		var ok bool
		eval(fmt.Sprintf(`(() => { const s = document.getElementById(%q); if (![...s.options].some(o => o.value === %q)) return false; s.value = %q; s.dispatchEvent(new Event("change")); return true })()`, id, value, value), &ok)
		require.True(t, ok, "#%s has no option %q", id, value)
	}

	// Load: one row per work item (and the project's own events), a mark
	// per event, the chain verified at the head.
	run(chromedp.Navigate(srv.URL))
	wait("the page", `document.body.dataset.ready === "true"`)
	wait("the verification", `document.getElementById("verify").dataset.state === "intact"`)
	var verdict string
	eval(`document.getElementById("verify-title").textContent`, &verdict)
	require.Equal(t, "chain intact, not anchored: a rewritten and re-hashed history would also pass; run `awr anchor`", verdict, "no anchor: never \"verified\"")
	require.Equal(t, []string{"(project)", "CART-1", "OPS-1"}, rows())
	require.Equal(t, seqs(all), marks())
	var headShown string
	eval(`document.getElementById("head").dataset.head`, &headShown)
	require.Equal(t, fmt.Sprint(head), headShown)
	var verifyRev string
	eval(`document.getElementById("verify").dataset.rev`, &verifyRev)
	require.Equal(t, fmt.Sprint(head), verifyRev)
	requireState(t, f, eval, head)
	shot("ui-timeline.png")

	// The slider, moved with the keyboard to revision 5 (alice's
	// checkpoint, while she held CART-1): the state shown is `--at 5`'s.
	const early = 5
	run(chromedp.Focus(chromedp.CSS("#rev")), chromedp.KeyEvent(kb.Home))
	for i := 1; i < early; i++ {
		run(chromedp.KeyEvent(kb.ArrowRight))
	}
	wait("the state at revision 5", fmt.Sprintf(`document.getElementById("state").dataset.rev === "%d"`, early))
	requireState(t, f, eval, early)
	var after int
	eval(`document.querySelectorAll("#timeline .mark.after").length`, &after)
	require.Equal(t, int(head)-early, after, "the marks after the slider's revision are dimmed")
	shot("ui-slider.png")

	// An event's detail: click its mark; the hash is the log's.
	run(chromedp.Click(chromedp.CSS(fmt.Sprintf(`#timeline .mark[data-seq="%d"]`, early))))
	wait("the event's detail", fmt.Sprintf(`document.getElementById("detail").dataset.seq === "%d"`, early))
	var detail struct {
		Hash, Prev, Kind, Stream, Payload string
	}
	eval(`({Hash: document.getElementById("detail-hash").textContent, Prev: document.getElementById("detail-prev-hash").textContent,
		Kind: document.querySelector('#envelope tr[data-field="kind"] td').textContent,
		Stream: document.querySelector('#envelope tr[data-field="stream"] td').textContent,
		Payload: document.getElementById("payload").textContent})`, &detail)
	ev := all[early-1]
	require.Equal(t, ev.Hash, detail.Hash)
	require.Equal(t, ev.Prev, detail.Prev)
	require.Equal(t, ev.Kind, detail.Kind)
	require.Equal(t, ev.Stream, detail.Stream)
	require.JSONEq(t, string(ev.Payload), detail.Payload)
	shot("ui-event.png")
	run(chromedp.Click(chromedp.CSS("#rev-head")))
	wait("the state at the head", fmt.Sprintf(`document.getElementById("state").dataset.rev === "%d"`, head))

	// Filters: by work, by kind, by session, by agent; each shows exactly
	// what `awr log` answers with the same filter.
	choose("f-work", "CART-1")
	want := seqs(f.log("--work", "CART-1"))
	wait("the work filter", fmt.Sprintf(`document.querySelectorAll("#timeline .mark").length === %d && document.querySelectorAll("#timeline .row").length === 1`, len(want)))
	require.Equal(t, []string{"CART-1"}, rows())
	require.Equal(t, want, marks())
	shot("ui-filtered.png")
	choose("f-work", "")
	choose("f-kind", "checkpoint_recorded")
	want = seqs(f.log("--kind", "checkpoint_recorded"))
	require.Len(t, want, 2)
	wait("the kind filter", fmt.Sprintf(`document.querySelectorAll("#timeline .mark").length === %d`, len(want)))
	require.Equal(t, want, marks())
	var kinds []string
	eval(`[...new Set([...document.querySelectorAll("#timeline .mark")].map(m => m.dataset.kind))]`, &kinds)
	require.Equal(t, []string{"checkpoint_recorded"}, kinds)
	choose("f-kind", "")
	choose("f-session", f.Alice)
	want = seqs(f.log("--session", f.Alice))
	wait("the session filter", fmt.Sprintf(`document.querySelectorAll("#timeline .mark").length === %d`, len(want)))
	require.Equal(t, want, marks())
	choose("f-session", "")
	choose("f-agent", "carol")
	var carol []int64
	for _, e := range f.log() {
		if e.Actor == "carol" {
			carol = append(carol, e.Seq)
		}
	}
	require.NotEmpty(t, carol)
	wait("the agent filter", fmt.Sprintf(`document.querySelectorAll("#timeline .mark").length === %d`, len(carol)))
	require.Equal(t, carol, marks())
	run(chromedp.Click(chromedp.CSS("#f-clear")))
	wait("no filter", fmt.Sprintf(`document.querySelectorAll("#timeline .mark").length === %d`, head))

	// Lanes per agent: one row per actor of the log, each with exactly
	// that actor's events.
	byActor := map[string][]int64{}
	for _, e := range f.log() {
		byActor[e.Actor] = append(byActor[e.Actor], e.Seq)
	}
	choose("lanes", "agent")
	wait("the agent lanes", fmt.Sprintf(`document.querySelectorAll("#timeline .row").length === %d`, len(byActor)))
	for actor, want := range byActor {
		lane := actor
		if lane == "" {
			lane = "(project)"
		}
		var got []int64
		eval(fmt.Sprintf(`[...document.querySelectorAll('#timeline .row[data-lane=%q] .mark')].map(m => Number(m.dataset.seq)).sort((a, b) => a - b)`, lane), &got)
		require.Equal(t, want, got, "the lane of %s", lane)
	}
	choose("lanes", "work")
	wait("the work lanes", `document.querySelectorAll("#timeline .row").length === 3`)

	// Live: another process appends a checkpoint; it appears without a
	// reload, the slider follows the head and the verification covers it.
	f.run("session", "checkpoint", "--session", f.Carol, "--agent", "carol", "--digest", "alert rule reviewed", "--next-action", "close OPS-1")
	all = f.log()
	head = int64(len(all))
	wait("the new event", fmt.Sprintf(`document.querySelector('#timeline .mark[data-seq="%d"]') !== null`, head))
	require.Equal(t, seqs(all), marks())
	wait("the state at the new head", fmt.Sprintf(`document.getElementById("state").dataset.rev === "%d"`, head))
	wait("the verification of the new head", fmt.Sprintf(`document.getElementById("verify").dataset.state === "intact" && document.getElementById("verify").dataset.rev === "%d"`, head))
	var navs int
	eval(`performance.getEntriesByType("navigation").length`, &navs)
	require.Equal(t, 1, navs, "the page was not reloaded")

	// A diff is a URL too: ?from&to shows what awr diff shows, entity by
	// entity, times in ISO 8601 UTC, no bookkeeping field.
	run(chromedp.Navigate(srv.URL + "?from=3&to=6"))
	wait("the diff", `document.body.dataset.opened === "true" && document.getElementById("diff").dataset.to === "6"`)
	var d struct {
		Changes map[string][]struct {
			ID     string `json:"id"`
			Change string `json:"change"`
			Fields []struct {
				Field string `json:"field"`
			} `json:"fields"`
		} `json:"changes"`
	}
	require.NoError(t, json.Unmarshal(f.run("diff", "--from", "3", "--to", "6"), &d))
	var wantEntities, gotEntities, gotFields []string
	for _, m := range []string{"sessions", "claims", "checkpoints", "knowledge", "work_items", "bindings", "seats"} {
		for _, e := range d.Changes[m] {
			wantEntities = append(wantEntities, m+" "+e.ID+" "+e.Change)
		}
	}
	require.NotEmpty(t, wantEntities)
	eval(`[...document.querySelectorAll("#diff .entity")].map(e => e.dataset.model + " " + e.dataset.id + " " + e.dataset.change)`, &gotEntities)
	require.Equal(t, wantEntities, gotEntities)
	eval(`[...document.querySelectorAll("#diff .field")].map(f => f.textContent)`, &gotFields)
	require.NotEmpty(t, gotFields)
	for _, line := range gotFields {
		require.NotContains(t, line, "content_hash", "bookkeeping is left out")
		if strings.Contains(line, "_at: ") {
			require.Regexp(t, `_at: (\(none\)|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)`, line, "a time in ISO 8601 UTC")
		}
	}
	var search string
	eval(`location.search`, &search)
	require.Equal(t, "?from=3&to=6", search)

	// A row edited under the head (triggers dropped, payload rewritten):
	// verifying again shows the failure, never green.
	tamper(t, f.dir, `UPDATE events SET payload = replace(payload, 'cart model drafted', 'cart model DONE') WHERE seq = 5`)
	run(chromedp.Click(chromedp.CSS("#verify-again")))
	wait("the failed verification", `document.getElementById("verify").dataset.state === "failed"`)
	var failText string
	eval(`document.getElementById("verify").textContent`, &failText)
	require.Contains(t, failText, "VERIFICATION FAILED")
	require.Contains(t, failText, "seq 5")

	// SIGINT stops the server with exit 0.
	require.Equal(t, 0, srv.stop(t, syscall.SIGINT), "stderr: %s", srv.errb)

	// The sessions of a longer history, a page at a time.
	browseSessions(t, bctx)
}

// requireState checks the state the page shows against `awr status`,
// `awr session list --newest` (its first page) and `awr ready --all` at revision rev.
func requireState(t *testing.T, f *fixture, eval func(string, any), rev int64) {
	t.Helper()
	at := fmt.Sprint(rev)
	var status struct {
		Sessions struct {
			Active int `json:"active"`
		} `json:"sessions"`
		LiveClaims int `json:"live_claims"`
		WorkItems  int `json:"work_items"`
		ReadyCount int `json:"ready_count"`
	}
	require.NoError(t, json.Unmarshal(f.run("status", "--at", at), &status))
	var shown struct{ Active, Claims, Items, Ready string }
	eval(`({Active: document.getElementById("s-active").dataset.n, Claims: document.getElementById("s-claims").dataset.n,
		Items: document.getElementById("s-items").dataset.n, Ready: document.getElementById("s-ready").dataset.n})`, &shown)
	require.Equal(t, fmt.Sprint(status.Sessions.Active), shown.Active)
	require.Equal(t, fmt.Sprint(status.LiveClaims), shown.Claims)
	require.Equal(t, fmt.Sprint(status.WorkItems), shown.Items)
	require.Equal(t, fmt.Sprint(status.ReadyCount), shown.Ready)

	var sessions struct {
		Sessions []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal(f.run("session", "list", "--newest", "--limit", "100", "--at", at), &sessions))
	var wantSessions, gotSessions []string
	for _, s := range sessions.Sessions {
		wantSessions = append(wantSessions, s.ID+" "+s.Status)
	}
	eval(`[...document.querySelectorAll("#sessions tbody tr")].map(r => r.dataset.id + " " + r.dataset.status)`, &gotSessions)
	require.Equal(t, wantSessions, gotSessions)

	type item struct {
		Key    string `json:"key"`
		Status string `json:"status"`
		Holder *struct {
			SessionID    string `json:"session_id"`
			FencingToken int64  `json:"fencing_token"`
		} `json:"holder"`
	}
	var ready struct {
		Ready    []item `json:"ready"`
		NotReady []item `json:"not_ready"`
	}
	require.NoError(t, json.Unmarshal(f.run("ready", "--all", "--at", at), &ready))
	items := append(ready.Ready, ready.NotReady...)
	sort.Slice(items, func(i, j int) bool { return items[i].Key < items[j].Key })
	var wantItems, wantClaims, gotItems, gotClaims []string
	for _, it := range items {
		holder := ""
		if it.Holder != nil {
			holder = it.Holder.SessionID
			wantClaims = append(wantClaims, fmt.Sprintf("%s %s %d", it.Key, it.Holder.SessionID, it.Holder.FencingToken))
		}
		wantItems = append(wantItems, it.Key+" "+it.Status+" "+holder)
	}
	eval(`[...document.querySelectorAll("#work-items tbody tr")].map(r => r.dataset.key + " " + r.dataset.status + " " + r.dataset.holder)`, &gotItems)
	eval(`[...document.querySelectorAll("#claims tbody tr")].map(r => r.dataset.work + " " + r.dataset.session + " " + r.dataset.token)`, &gotClaims)
	require.Equal(t, wantItems, gotItems)
	require.Equal(t, wantClaims, gotClaims)
	require.Equal(t, status.LiveClaims, len(wantClaims))
}

// tamper edits the project database as an attacker would, after dropping
// the append-only triggers.
func tamper(t *testing.T, dir string, stmts ...string) {
	t.Helper()
	conn, err := events.OpenConn(filepath.Join(dir, ".awr", "awr.db"), sqlite.OpenReadWrite)
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range append([]string{"DROP TRIGGER events_no_update", "DROP TRIGGER events_no_delete", "DROP TRIGGER events_seq_gapless"}, stmts...) {
		require.NoError(t, sqlitex.ExecuteTransient(conn, q, nil), q)
	}
}

// TestBrowser_Replica: on an imported copy the page says it is a replica
// of its origin, at the head recorded at import, and once the copy is
// forked (by another process, while the page is open) it shows where the
// fork began, both as `awr status` reports them.
func TestBrowser_Replica(t *testing.T) {
	browser := chromium(t)
	f := newFixture(t)
	export := filepath.Join(t.TempDir(), "checkout.jsonl")
	f.run("export", "--output", export)
	copyDir := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.MkdirAll(copyDir, 0o755))
	f.run("import", export, "--project", copyDir)
	f.dir = copyDir
	for i, kv := range f.env {
		if strings.HasPrefix(kv, "AWR_PROJECT=") {
			f.env[i] = "AWR_PROJECT=" + copyDir
		}
	}
	origin := f.jsonOf("status")["origin"].(map[string]any)
	srv := f.serve()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bctx := launch(t, ctx,
		chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	wait := func(what, expr string) { t.Helper(); jsWait(t, bctx, what, expr) }
	text := func(id string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Evaluate[string](fmt.Sprintf(`document.getElementById(%q).textContent`, id)))
		require.NoError(t, err)
		return s
	}

	require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(srv.URL)))
	wait("the page", `document.body.dataset.ready === "true"`)
	wait("the replica banner", fmt.Sprintf(`document.getElementById("origin") !== null && document.getElementById("origin").dataset.seq === "%v"`, origin["head_seq"]))
	require.Contains(t, text("origin"), origin["project_id"].(string))

	fork := f.jsonOf("fork", "--accept", "--reason", "audit copy")
	st := f.jsonOf("status")["fork"].(map[string]any)
	require.NotNil(t, fork)
	wait("the fork banner, live", fmt.Sprintf(`document.getElementById("fork") !== null && document.getElementById("fork").dataset.seq === "%v"`, st["seq"]))
	require.Contains(t, text("fork"), fmt.Sprintf("Forked at seq %v", st["seq"]))
	require.Equal(t, 0, srv.stop(t, syscall.SIGINT), "stderr: %s", srv.errb)
}

// launch starts Chromium for a test with opts (after chromedp's defaults)
// and returns a tab's context, the browser already started; both end
// with the test. A browser that dies as it starts (seen on a loaded
// machine: Chromium exits before it listens, its output only the usual
// noise) is started again, up to three times in all: the page under test
// is not what failed.
func launch(t *testing.T, ctx context.Context, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	for attempt := 1; ; attempt++ {
		actx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:], opts...)...)
		bctx, cancelTab := chromedp.NewContext(actx)
		err := chromedp.Do(bctx)
		if err == nil {
			t.Cleanup(func() {
				cancelTab()
				cancelAlloc()
			})
			return bctx
		}
		cancelTab()
		cancelAlloc()
		if attempt == 3 || !strings.Contains(err.Error(), "chrome failed to start") {
			t.Fatalf("start chromium: %v", err)
		}
		t.Logf("chromium did not start (attempt %d), starting it again: %v", attempt, err)
	}
}

// jsWait polls the JavaScript expression expr in the browser bctx until
// it is true (at most a minute): what the page is waited for, never a
// sleep.
func jsWait(t *testing.T, bctx context.Context, what, expr string) {
	t.Helper()
	_, err := chromedp.Run(bctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(time.Minute), chromedp.WithPollingInterval(50*time.Millisecond)))
	require.NoError(t, err, "waiting for %s (%s)", what, expr)
}

// jsEval evaluates the JavaScript expression expr in the browser bctx
// and decodes its JSON value into v.
func jsEval(t *testing.T, bctx context.Context, expr string, v any) {
	t.Helper()
	raw, err := chromedp.Run(bctx, chromedp.Evaluate[json.RawMessage](expr))
	require.NoError(t, err, expr)
	require.NoError(t, json.Unmarshal(raw, v), "%s: %s", expr, raw)
}
