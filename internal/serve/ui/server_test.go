package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fixtures/testkit"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/internal/serve/ui"
	"github.com/stretchr/testify/require"
)

// served is a project opened through the door, with a session holding a
// claim and a checkpoint (events 1..5), served by ui.Serve on loopback.
type served struct {
	p    *project.Project
	dir  string
	base string // http://127.0.0.1:PORT
	addr string // 127.0.0.1:PORT
}

func serveProject(t *testing.T) *served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dir := filepath.Join(t.TempDir(), "checkout")
	require.NoError(t, os.CopyFS(dir, os.DirFS(testkit.Path("fixtures", "projects", "checkout"))))
	p, err := project.Open(ctx, dir, project.Options{})
	require.NoError(t, err)
	_, err = p.Init(ctx, project.InitRequest{Accept: true}) // 1, 2
	require.NoError(t, err)
	s, err := p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "alice", Claim: true}) // 3, 4
	require.NoError(t, err)
	_, err = p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{SessionID: s.Session.ID, Agent: "alice", Digest: "d", NextAction: "n"}) // 5
	require.NoError(t, err)
	ln, err := ui.Listen("")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- ui.Serve(ctx, ln, p) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		p.Close()
	})
	return &served{p: p, dir: dir, base: "http://" + ln.Addr().String(), addr: ln.Addr().String()}
}

// get sends method path with the Host header host ("" for the address
// served) and returns the status and body.
func (s *served) do(t *testing.T, method, path, host string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, body
}

func (s *served) getJSON(t *testing.T, path string, v any) int {
	t.Helper()
	code, h, body := s.do(t, http.MethodGet, path, "")
	require.Equal(t, "application/json; charset=utf-8", h.Get("Content-Type"), "%s: %s", path, body)
	require.NoError(t, json.Unmarshal(body, v), "%s: %s", path, body)
	return code
}

// jsonOf is v as the CLI's JSON would carry it, decoded generically.
func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

func TestServer_API(t *testing.T) {
	s := serveProject(t)
	ctx := context.Background()
	at := func(n int64) project.Read { return project.Read{At: &n} }

	t.Run("Head", func(t *testing.T) {
		var head map[string]any
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/head", &head))
		st, err := s.p.Status(ctx, project.StatusRequest{})
		require.NoError(t, err)
		require.EqualValues(t, 5, head["project_revision"])
		require.Equal(t, st.HeadHash, head["head_hash"])
	})
	t.Run("Log", func(t *testing.T) {
		var got any
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/log?work=CART-1&since=3&at=4", &got))
		want, err := s.p.Log(ctx, project.LogRequest{Read: at(4), Work: "CART-1", Since: 3})
		require.NoError(t, err)
		require.Equal(t, jsonOf(t, want), got)
		require.Len(t, want.Events, 1)
	})
	t.Run("StateAt", func(t *testing.T) {
		var got map[string]any
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/state?at=2", &got))
		st, err := s.p.Status(ctx, project.StatusRequest{Read: at(2)})
		require.NoError(t, err)
		ss, err := s.p.SessionList(ctx, project.SessionListRequest{Read: at(2), Newest: true, Limit: new(ui.SessionPage)})
		require.NoError(t, err)
		ready, err := s.p.Ready(ctx, project.ReadyRequest{Read: at(2), All: true})
		require.NoError(t, err)
		require.Equal(t, jsonOf(t, st), got["status"])
		require.Equal(t, jsonOf(t, ss), got["sessions"])
		require.Equal(t, jsonOf(t, ready), got["ready"])
		require.EqualValues(t, 2, got["project_revision"])
		require.EqualValues(t, 5, got["head"])
		require.Empty(t, ss.Sessions, "no session yet at revision 2")
	})
	t.Run("StateAtHead", func(t *testing.T) {
		var got map[string]any
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/state", &got))
		require.EqualValues(t, 5, got["project_revision"])
		require.EqualValues(t, 1, got["status"].(map[string]any)["live_claims"])
	})
	t.Run("Verify", func(t *testing.T) {
		var got map[string]any
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/verify", &got))
		require.Equal(t, true, got["ok"])
		require.EqualValues(t, 5, got["project_revision"])
		require.NotContains(t, got, "error")
	})
	t.Run("Kinds", func(t *testing.T) {
		var got struct{ Kinds []string }
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/kinds", &got))
		require.Contains(t, got.Kinds, "checkpoint_recorded")
		require.Equal(t, project.EventKinds(), got.Kinds)
	})
	t.Run("ErrBeyondHead", func(t *testing.T) {
		var got fault.Object
		require.Equal(t, http.StatusBadRequest, s.getJSON(t, "/api/state?at=9", &got))
		require.Equal(t, fault.InvalidInput, got.Code)
		require.Contains(t, got.Message, "--at 9 is beyond project_revision 5")
	})
	t.Run("ErrNotANumber", func(t *testing.T) {
		var got fault.Object
		require.Equal(t, http.StatusBadRequest, s.getJSON(t, "/api/log?since=0x5", &got))
		require.Equal(t, fault.InvalidInput, got.Code)
	})
	t.Run("ErrUnknownKind", func(t *testing.T) {
		var got fault.Object
		require.Equal(t, http.StatusBadRequest, s.getJSON(t, "/api/log?kind=nope", &got))
		require.Equal(t, fault.InvalidInput, got.Code)
	})
	t.Run("ErrNoSuchAPI", func(t *testing.T) {
		var got fault.Object
		require.Equal(t, http.StatusNotFound, s.getJSON(t, "/api/nope", &got))
		require.Equal(t, fault.NotFound, got.Code)
	})
	t.Run("Assets", func(t *testing.T) {
		for path, typ := range map[string]string{"/": "text/html", "/app.js": "javascript", "/app.css": "text/css"} {
			code, h, body := s.do(t, http.MethodGet, path, "")
			require.Equal(t, http.StatusOK, code, path)
			require.Contains(t, h.Get("Content-Type"), typ, path)
			require.NotEmpty(t, body, path)
			require.Contains(t, h.Get("Content-Security-Policy"), "default-src 'self'", path)
		}
		code, _, body := s.do(t, http.MethodGet, "/", "")
		require.Equal(t, http.StatusOK, code)
		require.NotContains(t, string(body), "http://", "the page loads nothing from the network")
		require.NotContains(t, string(body), "https://", "the page loads nothing from the network")
		code, _, _ = s.do(t, http.MethodGet, "/assets/app.js", "")
		require.Equal(t, http.StatusNotFound, code)
	})
}

// TestServer_VerifyFailed: a row edited under the head is shown failed by
// a fresh verification, with the VerifyFailed error.
func TestServer_VerifyFailed(t *testing.T) {
	s := serveProject(t)
	var got map[string]any
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/verify", &got))
	require.Equal(t, true, got["ok"])
	tamper(t, s.dir, `UPDATE events SET payload = replace(payload, '"digest":"d"', '"digest":"x"') WHERE seq = 5`)
	got = nil
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/verify?fresh=1", &got))
	require.Equal(t, false, got["ok"])
	require.EqualValues(t, 5, got["first_bad_seq"])
	require.Equal(t, string(fault.VerifyFailed), got["error"].(map[string]any)["code"])
}

// TestServer_HostHeader: a request naming another host (a DNS rebinding
// of some site's name to 127.0.0.1) is refused; the address served and
// localhost on its port are answered.
func TestServer_HostHeader(t *testing.T) {
	s := serveProject(t)
	_, port, _ := net.SplitHostPort(s.addr)
	for _, host := range []string{"evil.example:" + port, "evil.example", "127.0.0.1:1", "localhost:1", "127.0.0.1", "127.0.0.2:" + port, "[::1]"} {
		code, _, body := s.do(t, http.MethodGet, "/api/head", host)
		require.Equal(t, http.StatusForbidden, code, "Host %s: %s", host, body)
		require.Contains(t, string(body), "is not the address this page is served on")
		code, _, _ = s.do(t, http.MethodGet, "/", host)
		require.Equal(t, http.StatusForbidden, code, "Host %s", host)
	}
	for _, host := range []string{s.addr, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		code, _, body := s.do(t, http.MethodGet, "/api/head", host)
		require.Equal(t, http.StatusOK, code, "Host %s: %s", host, body)
	}
}

// TestServer_ReadOnly: only GET and HEAD are answered.
func TestServer_ReadOnly(t *testing.T) {
	s := serveProject(t)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, "PROPFIND"} {
		for _, path := range []string{"/", "/api/head", "/api/log", "/api/verify"} {
			code, h, body := s.do(t, m, path, "")
			require.Equal(t, http.StatusMethodNotAllowed, code, "%s %s: %s", m, path, body)
			require.Equal(t, "GET, HEAD", h.Get("Allow"))
		}
	}
	code, _, body := s.do(t, http.MethodHead, "/api/head", "")
	require.Equal(t, http.StatusOK, code)
	require.Empty(t, body)
	var head map[string]any
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/head", &head))
	require.EqualValues(t, 5, head["project_revision"], "nothing was written")
}

func TestListen(t *testing.T) {
	t.Run("Loopback", func(t *testing.T) {
		for _, addr := range []string{"", "127.0.0.1:0", "localhost:0", "127.0.0.9:0"} {
			ln, err := ui.Listen(addr)
			require.NoError(t, err, addr)
			require.True(t, ui.Loopback(ln), addr)
			require.Regexp(t, `^http://127\.0\.0\.\d+:\d+/$`, ui.URL(ln))
			ln.Close()
		}
	})
	t.Run("ErrNotLoopback", func(t *testing.T) {
		for addr, msg := range map[string]string{
			":0":          "every interface",
			"0.0.0.0:0":   "every interface",
			"[::]:0":      "every interface",
			"example.com": "not HOST:PORT",
			"example:80":  "names a host",
			"127.0.0.1":   "not HOST:PORT",
		} {
			ln, err := ui.Listen(addr)
			require.Error(t, err, addr)
			require.Nil(t, ln)
			fe := fault.As(err)
			require.Equal(t, fault.InvalidInput, fe.Code, addr)
			require.Contains(t, fe.Message, msg, addr)
			require.True(t, strings.HasPrefix(fe.Hint, "awr ui --listen 127.0.0.1:"), fe.Hint)
		}
	})
	t.Run("NamedInterface", func(t *testing.T) {
		// An address other than loopback named in full passes the policy;
		// 192.0.2.1 (TEST-NET-1) is no interface's, so the system refuses it.
		_, err := ui.Listen("192.0.2.1:0")
		require.Error(t, err)
		require.Equal(t, fault.Storage, fault.CodeOf(err))
		require.ErrorIs(t, err, syscall.EADDRNOTAVAIL)
	})
}

// TestServer_BadInput: every malformed or unbounded request to the API
// (huge or zero page sizes, negative or future revisions, a parameter
// given twice or unknown, a bad escape, a time that is not one) is a 4xx
// with the one JSON error object, and so is a request from another Host
// or Origin; nothing is read for it.
func TestServer_BadInput(t *testing.T) {
	s := serveProject(t)
	for path, want := range map[string]int{
		"/api/log?limit=100000":          http.StatusBadRequest,
		"/api/log?limit=1001":            http.StatusBadRequest,
		"/api/log?limit=0":               http.StatusBadRequest,
		"/api/log?limit=-1":              http.StatusBadRequest,
		"/api/log?since=-5":              http.StatusBadRequest,
		"/api/log?at=-1":                 http.StatusBadRequest,
		"/api/log?at=6":                  http.StatusBadRequest,
		"/api/log?at=99999999999999":     http.StatusBadRequest,
		"/api/log?at=1&at=2":             http.StatusBadRequest,
		"/api/log?bogus=1":               http.StatusBadRequest,
		"/api/log?kind=%zz":              http.StatusBadRequest,
		"/api/log?kind=a;b":              http.StatusBadRequest,
		"/api/log?since=1e3":             http.StatusBadRequest,
		"/api/log?work=NOPE-9":           http.StatusNotFound,
		"/api/state?at=-3":               http.StatusBadRequest,
		"/api/state?at=5000000":          http.StatusBadRequest,
		"/api/state?at=x":                http.StatusBadRequest,
		"/api/head?x=1":                  http.StatusBadRequest,
		"/api/seek?time=yesterday":       http.StatusBadRequest,
		"/api/seek?time=-1":              http.StatusBadRequest,
		"/api/seek":                      http.StatusBadRequest,
		"/api/histogram?buckets=100000":  http.StatusBadRequest,
		"/api/histogram?buckets=0":       http.StatusBadRequest,
		"/api/histogram?from=9&to=3":     http.StatusBadRequest,
		"/api/search?q=":                 http.StatusBadRequest,
		"/api/search?q=cart&limit=10000": http.StatusBadRequest,
		"/api/search?q=cart&limit=0":     http.StatusBadRequest,
		"/api/diff?from=-1":              http.StatusBadRequest,
		"/api/diff?from=4&to=2":          http.StatusBadRequest,
		"/api/diff?from=1&to=77":         http.StatusBadRequest,
		"/api/verify?fresh=1&fresh=1":    http.StatusBadRequest,
		"/api/sessions?limit=0":          http.StatusBadRequest,
		"/api/sessions?limit=201":        http.StatusBadRequest,
		"/api/sessions?cursor=bogus":     http.StatusBadRequest,
		"/api/sessions?active=yes":       http.StatusBadRequest,
		"/api/sessions?at=99":            http.StatusBadRequest,
		"/api/sessions?work=NOPE-9":      http.StatusNotFound,
	} {
		var got fault.Object
		code := s.getJSON(t, path, &got)
		require.Equal(t, want, code, "%s: %+v", path, got)
		require.NotEmpty(t, got.Code, path)
		require.NotEmpty(t, got.Message, path)
	}

	t.Run("PageBounded", func(t *testing.T) {
		// Without ?limit a page holds DefaultPage events at most; the
		// next page starts where it stopped.
		var got project.LogResult
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/log?limit=2", &got))
		require.Len(t, got.Events, 2)
		require.EqualValues(t, 2, got.NextSince)
		got = project.LogResult{}
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/log?since=2&limit=1000", &got))
		require.Len(t, got.Events, 3)
		require.Zero(t, got.NextSince)
	})

	t.Run("ErrOtherOrigin", func(t *testing.T) {
		for _, origin := range []string{"http://evil.example", "null", "https://" + s.addr, "http://" + s.addr + ".evil.example"} {
			req, err := http.NewRequest(http.MethodGet, s.base+"/api/log", nil)
			require.NoError(t, err)
			req.Header.Set("Origin", origin)
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			var got fault.Object
			require.NoError(t, json.NewDecoder(res.Body).Decode(&got), origin)
			res.Body.Close()
			require.Equal(t, http.StatusForbidden, res.StatusCode, origin)
			require.Equal(t, "application/json; charset=utf-8", res.Header.Get("Content-Type"))
			require.Contains(t, got.Message, "Origin "+origin+" is not this page's")
		}
		req, err := http.NewRequest(http.MethodGet, s.base+"/api/head", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", s.base)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, "the page's own origin")
	})
	t.Run("ErrOtherHostIsJSON", func(t *testing.T) {
		code, h, body := s.do(t, http.MethodGet, "/api/head", "evil.example")
		require.Equal(t, http.StatusForbidden, code)
		require.Equal(t, "application/json; charset=utf-8", h.Get("Content-Type"))
		var got fault.Object
		require.NoError(t, json.Unmarshal(body, &got))
		require.Equal(t, fault.InvalidInput, got.Code)
	})
}

// TestServer_SeekHistogram: the time axis's reads answer from the log's
// order of time without reading it: the first event at or after a time,
// and events per interval that add up to the revision.
func TestServer_SeekHistogram(t *testing.T) {
	s := serveProject(t)
	ctx := context.Background()
	all, err := s.p.Log(ctx, project.LogRequest{})
	require.NoError(t, err)
	for _, e := range all.Events {
		var got project.SeekResult
		require.Equal(t, http.StatusOK, s.getJSON(t, "/api/seek?time="+strconv.FormatInt(e.OccurredAt, 10), &got))
		require.LessOrEqual(t, got.Seq, e.Seq)
		require.Equal(t, e.OccurredAt, got.OccurredAt)
	}
	var none project.SeekResult
	last := all.Events[len(all.Events)-1]
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/seek?time="+strconv.FormatInt(last.OccurredAt+1, 10), &none))
	require.Zero(t, none.Seq, "no event after the last")
	var first project.SeekResult
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/seek?time=2000-01-01T00:00:00Z", &first))
	require.EqualValues(t, 1, first.Seq)

	var h project.HistogramResult
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/histogram?buckets=7", &h))
	require.Len(t, h.Buckets, 7)
	var total int64
	for _, b := range h.Buckets {
		total += b.Count
		if b.Count > 0 {
			require.LessOrEqual(t, b.Start, all.Events[b.FirstSeq-1].OccurredAt)
			require.Less(t, all.Events[b.FirstSeq-1].OccurredAt, b.End)
		}
	}
	require.EqualValues(t, 5, total)
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/histogram?buckets=3&at=2", &h))
	total = 0
	for _, b := range h.Buckets {
		total += b.Count
	}
	require.EqualValues(t, 2, total, "as of revision 2")
}

// TestServer_Export: /api/export writes the filtered range as JSONL, one
// envelope per line, the same events /api/log lists; a bad limit is a
// JSON error.
func TestServer_Export(t *testing.T) {
	s := serveProject(t)
	code, h, body := s.do(t, http.MethodGet, "/api/export?work=CART-1", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, "application/x-ndjson", h.Get("Content-Type"))
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	want, err := s.p.Log(context.Background(), project.LogRequest{Work: "CART-1"})
	require.NoError(t, err)
	require.Len(t, lines, len(want.Events))
	for i, line := range lines {
		var e map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		require.EqualValues(t, want.Events[i].Seq, e["seq"])
		require.Equal(t, want.Events[i].Hash, e["hash"])
	}
	code, _, body = s.do(t, http.MethodGet, "/api/export?limit=2", "")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, strings.Split(strings.TrimSpace(string(body)), "\n"), 2)
	var got fault.Object
	require.Equal(t, http.StatusBadRequest, s.getJSON(t, "/api/export?limit=1000000", &got))
	require.Equal(t, http.StatusBadRequest, s.getJSON(t, "/api/export?at=99", &got))
}

// TestServer_Lanes: /api/lanes groups the sessions by work item, agent or
// session, counts the sessions active in each interval of seqs, lists a
// small lane's spans, pages the lanes in key order, answers as of a past
// revision, and refuses what is out of range with a JSON error.
func TestServer_Lanes(t *testing.T) {
	s := serveProject(t) // alice's session on CART-1 started at 3, checkpointed at 5
	ctx := context.Background()
	list, err := s.p.SessionList(ctx, project.SessionListRequest{})
	require.NoError(t, err)
	alice := list.Sessions[0].ID
	_, err = s.p.SessionEnd(ctx, project.SessionEndRequest{SessionID: alice, Agent: "alice", Outcome: events.OutcomeIncomplete}) // 6, 7 (the claim's release)
	require.NoError(t, err)
	bob, err := s.p.SessionStart(ctx, project.SessionStartRequest{Work: "OPS-1", Agent: "bob"})
	require.NoError(t, err)
	carol, err := s.p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "carol"})
	require.NoError(t, err)
	head, err := s.p.Head(ctx)
	require.NoError(t, err)
	rev := head.ProjectRevision
	aliceEnd := int64(0)
	limit := 100
	got, err := s.p.Log(ctx, project.LogRequest{Session: alice, Limit: &limit})
	require.NoError(t, err)
	for _, e := range got.Events {
		if e.Kind == "session_ended" {
			aliceEnd = e.Seq
		}
	}
	require.NotZero(t, aliceEnd)

	var byWork project.LanesResult
	require.Equal(t, http.StatusOK, s.getJSON(t, fmt.Sprintf("/api/lanes?by=work&buckets=%d", rev), &byWork))
	require.Equal(t, rev, byWork.ProjectRevision)
	require.Equal(t, 2, byWork.Total)
	require.Len(t, byWork.Lanes, 2)
	cart, ops := byWork.Lanes[0], byWork.Lanes[1]
	require.Equal(t, "CART-1", cart.Key)
	require.Equal(t, "OPS-1", ops.Key)
	require.Equal(t, 2, cart.Sessions)
	require.Equal(t, 1, cart.Open)
	require.Equal(t, int64(3), cart.FirstSeq)
	require.Equal(t, carol.Session.StartRevision, cart.LastSeq)
	require.Equal(t, []project.LaneSpan{
		{Session: alice, Agent: "alice", Work: "CART-1", From: 3, To: aliceEnd},
		{Session: carol.Session.ID, Agent: "carol", Work: "CART-1", From: carol.Session.StartRevision},
	}, cart.Spans)
	// One bucket per seq: alice is active from 3 to her end, carol from
	// her start to the head.
	require.Len(t, cart.Active, int(rev))
	for seq := int64(1); seq <= rev; seq++ {
		want := 0
		if seq >= 3 && seq <= aliceEnd {
			want++
		}
		if seq >= carol.Session.StartRevision {
			want++
		}
		require.Equal(t, want, cart.Active[seq-1], "CART-1 at seq %d", seq)
	}
	require.Equal(t, bob.Session.StartRevision, ops.FirstSeq)

	var byAgent project.LanesResult
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/lanes?by=agent&buckets=4&offset=1&limit=1", &byAgent))
	require.Equal(t, 3, byAgent.Total)
	require.Len(t, byAgent.Lanes, 1)
	require.Equal(t, "bob", byAgent.Lanes[0].Key, "the second lane of alice, bob, carol")
	require.Len(t, byAgent.Lanes[0].Active, 4)

	var past project.LanesResult
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/lanes?by=session&at=5", &past))
	require.Equal(t, 1, past.Total, "as of revision 5 only alice's session exists")
	require.Equal(t, alice, past.Lanes[0].Key)
	require.Equal(t, 1, past.Lanes[0].Open, "and it is still active then")
	require.Len(t, past.Lanes[0].Active, 100)

	for path, want := range map[string]int{
		"/api/lanes?by=colour":       http.StatusBadRequest,
		"/api/lanes?buckets=0":       http.StatusBadRequest,
		"/api/lanes?buckets=100000":  http.StatusBadRequest,
		"/api/lanes?limit=0":         http.StatusBadRequest,
		"/api/lanes?limit=100000":    http.StatusBadRequest,
		"/api/lanes?offset=-1":       http.StatusBadRequest,
		"/api/lanes?at=999":          http.StatusBadRequest,
		"/api/lanes?sort=1":          http.StatusBadRequest,
		"/api/lanes?limit=2&limit=3": http.StatusBadRequest,
	} {
		var e fault.Object
		require.Equal(t, want, s.getJSON(t, path, &e), path)
		require.NotEmpty(t, e.Code, path)
		require.NotEmpty(t, e.Message, path)
	}
}

// TestServer_SessionsPaged: /api/state carries the first page of the
// sessions (newest first), never all of them; /api/sessions gives the
// next page by the cursor, each page counting them all, and a walk
// over the cursors at one revision lists every session of it exactly
// once, in order, even while the head moves on between two pages.
func TestServer_SessionsPaged(t *testing.T) {
	s := serveProject(t) // alice's session, started at 3
	ctx := context.Background()
	for i := range 7 {
		work := []string{"CART-1", "OPS-1"}[i%2]
		_, err := s.p.SessionStart(ctx, project.SessionStartRequest{Work: work, Agent: fmt.Sprintf("agent-%d", i)})
		require.NoError(t, err)
	}
	all, err := s.p.SessionList(ctx, project.SessionListRequest{All: true})
	require.NoError(t, err)
	require.Len(t, all.Sessions, 8)
	rev := all.ProjectRevision
	var want []string
	for i := len(all.Sessions) - 1; i >= 0; i-- {
		want = append(want, all.Sessions[i].ID)
	}

	var st struct {
		Sessions project.SessionList `json:"sessions"`
	}
	require.Equal(t, http.StatusOK, s.getJSON(t, "/api/state", &st))
	require.Equal(t, 8, st.Sessions.SessionsTotal)
	require.Len(t, st.Sessions.Sessions, 8, "8 sessions fit a page of the state")
	require.Empty(t, st.Sessions.NextCursor)
	require.Equal(t, want[0], st.Sessions.Sessions[0].ID, "newest first")

	var got []string
	seen := map[string]int{}
	cursor, pages := "", 0
	for {
		path := fmt.Sprintf("/api/sessions?limit=3&at=%d", rev)
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		var page project.SessionList
		require.Equal(t, http.StatusOK, s.getJSON(t, path, &page), path)
		require.Equal(t, 8, page.SessionsTotal, "every page counts them all")
		require.Equal(t, rev, page.ProjectRevision)
		require.LessOrEqual(t, len(page.Sessions), 3)
		for _, e := range page.Sessions {
			got = append(got, e.ID)
			seen[e.ID]++
		}
		pages++
		if pages == 1 {
			// The head moves on: a session started now is not of rev.
			_, err := s.p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "late"})
			require.NoError(t, err)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
		require.Len(t, page.Sessions, 3, "a page before the last is full")
	}
	require.Equal(t, 3, pages)
	require.Equal(t, want, got, "every session of the revision, newest first")
	for id, n := range seen {
		require.Equal(t, 1, n, "session %s listed %d times", id, n)
	}

	// Only the active ones, of one work item.
	var act project.SessionList
	require.Equal(t, http.StatusOK, s.getJSON(t, fmt.Sprintf("/api/sessions?active=1&work=OPS-1&at=%d", rev), &act))
	require.Equal(t, 3, act.SessionsTotal)
	for _, e := range act.Sessions {
		require.Equal(t, "OPS-1", e.Work)
		require.Equal(t, "active", e.Status)
	}

}
