package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// pagedEvents is the length of the history browseSessions generates:
// about 250 sessions (two and a half pages of the state panel), and more
// events than the page marks one by one (a long log's page).
const pagedEvents = 2500

// browseSessions drives the sessions table of a real `awr ui` in the
// browser bctx (TestBrowser_Page's, to start no second Chromium) on a
// generated history of a few hundred sessions: the first page (newest
// first) and the total shown as `awr session list` counts them, the
// older pages read one at a time by their cursor and the newer one read
// again, every session listed on exactly one page, and a click on a
// session of the oldest page filtering the event list to its events.
func browseSessions(t *testing.T, bctx context.Context) {
	t.Helper()
	if testkit.Race {
		// Its subject runs as processes, never in the test binary: the
		// run without -race holds it (as testkit.PlainOnly skips).
		t.Log("the sessions' pages: not under -race; the run without -race holds them")
		return
	}
	t0 := time.Now()
	awr := awrBinary(t)
	dir := filepath.Join(t.TempDir(), "generated")
	for _, args := range [][]string{
		{"bench", "project", dir, "--tasks", "20", "--seed", "1"},
		{"--project", dir, "bench", "generate", "--events", strconv.Itoa(pagedEvents), "--seed", "1"},
	} {
		out, err := exec.Command(awr, args...).CombinedOutput()
		require.NoError(t, err, "awr %v: %s", args, out)
	}
	generated := time.Since(t0)
	f := &fixture{t: t, awr: awr, dir: dir, env: append(os.Environ(), "AWR_PROJECT="+dir, "TZ=UTC")}
	srv := f.serve()

	type page struct {
		Sessions []struct {
			ID   string `json:"id"`
			Work string `json:"work"`
		} `json:"sessions"`
		Total      int    `json:"sessions_total"`
		NextCursor string `json:"next_cursor"`
	}
	list := func(args ...string) page {
		t.Helper()
		var p page
		require.NoError(t, json.Unmarshal(f.run(append([]string{"session", "list", "--newest", "--limit", "100"}, args...)...), &p))
		return p
	}
	ids := func(p page) []string {
		out := []string{}
		for _, s := range p.Sessions {
			out = append(out, s.ID)
		}
		return out
	}
	wait := func(what, expr string) { t.Helper(); jsWait(t, bctx, what, expr) }
	eval := func(expr string, v any) { t.Helper(); jsEval(t, bctx, expr, v) }
	shown := func() []string {
		t.Helper()
		var out []string
		eval(`[...document.querySelectorAll("#sessions tbody tr")].map(r => r.dataset.id)`, &out)
		return out
	}
	pager := func() (first, last, total string) {
		t.Helper()
		var d map[string]string
		eval(`({...document.getElementById("sessions-pager").dataset})`, &d)
		return d["first"], d["last"], d["total"]
	}
	click := func(id string) {
		t.Helper()
		require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS("#"+id))))
	}

	first := list()
	require.Greater(t, first.Total, 200, "more than two pages of sessions")
	_, err := chromedp.Run(bctx, chromedp.Navigate(srv.URL))
	require.NoError(t, err)
	wait("the page", `document.body.dataset.ready === "true"`)
	wait("the sessions", `document.querySelectorAll("#sessions tbody tr").length > 0`)

	// The first page and the total.
	require.Equal(t, ids(first), shown())
	a, b, total := pager()
	require.Equal(t, []string{"1", "100", fmt.Sprint(first.Total)}, []string{a, b, total})
	var text string
	eval(`document.getElementById("sessions-shown").textContent`, &text)
	require.Contains(t, text, fmt.Sprintf("sessions 1–100 of %d, newest first", first.Total))

	// Older, page after page, each the CLI's page of the same cursor;
	// then newer, the page before again.
	seen := map[string]int{}
	for _, id := range shown() {
		seen[id]++
	}
	want, at := first, 1
	for want.NextCursor != "" {
		next := list("--cursor", want.NextCursor)
		click("sessions-older")
		wait("the next page of sessions", fmt.Sprintf(`document.getElementById("sessions-pager").dataset.first === "%d"`, at+100))
		require.Equal(t, ids(next), shown())
		for _, id := range shown() {
			seen[id]++
		}
		want, at = next, at+100
	}
	require.Len(t, seen, first.Total, "every session on a page")
	for id, n := range seen {
		require.Equal(t, 1, n, "session %s on %d pages", id, n)
	}
	var older bool
	eval(`document.getElementById("sessions-older").disabled`, &older)
	require.True(t, older, "no page after the last")
	oldest := shown()
	click("sessions-newer")
	wait("the page before", fmt.Sprintf(`document.getElementById("sessions-pager").dataset.first === "%d"`, at-100))
	click("sessions-older")
	wait("the last page again", fmt.Sprintf(`document.getElementById("sessions-pager").dataset.first === "%d"`, at))
	require.Equal(t, oldest, shown())

	// A session of the last page, one click from its events.
	pick := oldest[len(oldest)-1]
	evs := f.log("--session", pick)
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#sessions tr[data-id=%q]`, pick)))))
	wait("the session's events", fmt.Sprintf(`document.getElementById("f-session").value === %q && document.getElementById("f-count").textContent.startsWith("%d matching event")`, pick, len(evs)))

	// Opened afresh, the page has read the newest sessions only: the
	// detail of a later event of the oldest session still names its work
	// item.
	last := evs[len(evs)-1]
	require.Equal(t, "session/"+pick, last.Stream)
	require.NotEqual(t, "session_started", last.Kind)
	_, err = chromedp.Run(bctx, chromedp.Navigate(fmt.Sprintf("%s?event=%d", srv.URL, last.Seq)))
	require.NoError(t, err)
	wait("the event's detail", fmt.Sprintf(`document.getElementById("detail").dataset.seq === "%d"`, last.Seq))
	var work string
	eval(`document.querySelector('#envelope tr[data-field="work item"] td').textContent`, &work)
	require.Equal(t, want.Sessions[len(want.Sessions)-1].Work, work)
	t.Logf("%d sessions paged in the browser: %v in all, of which %v to generate the history", first.Total, time.Since(t0).Round(time.Millisecond), generated.Round(time.Millisecond))
}
