package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
)

// api answers the page's JSON reads, each one call through the door with
// the CLI's `--at` semantics.
type api struct {
	p *project.Project

	// verifyMu serializes verifications; last is the latest result and
	// the head it was made at, reused while the head stays.
	verifyMu sync.Mutex
	last     *VerifyAnswer
}

// StateResult is /api/state: the reads `awr status --at N`, `awr session
// list --newest --limit 100 --at N` (the first page of the sessions,
// newest first: /api/sessions gives the next with its next_cursor) and
// `awr ready --all --at N` answer, all at one revision.
type StateResult struct {
	ProjectRevision int64                 `json:"project_revision"`
	Head            int64                 `json:"head"`
	Status          *project.StatusResult `json:"status"`
	Sessions        *project.SessionList  `json:"sessions"`
	Ready           *project.ReadyResult  `json:"ready"`
}

// VerifyAnswer is /api/verify: the result of `awr verify` and, when it
// failed, its error.
type VerifyAnswer struct {
	*project.VerifyResult
	// VerifiedAt is when the verification ran (UTC ms).
	VerifiedAt int64         `json:"verified_at"`
	Error      *fault.Object `json:"error,omitempty"`
}

// KindsResult is /api/kinds.
type KindsResult struct {
	Kinds []string `json:"kinds"`
}

// MaxPage bounds the events of one /api/log answer: the page never asks
// for the whole log, and the server never reads it for one request.
const MaxPage = 1000

// DefaultPage is the page size of /api/log without ?limit.
const DefaultPage = 200

// MaxSearch bounds the hits of one /api/search answer.
const MaxSearch = 50

// SessionPage is the page size of the sessions in /api/state, and of
// /api/sessions without ?limit; MaxSessionPage (`awr session list`'s
// most) bounds ?limit.
const (
	SessionPage    = 100
	MaxSessionPage = 200
)

func (a *api) routes(mux *http.ServeMux) {
	get(mux, "GET /api/head", func(r *http.Request) (*project.HeadResult, error) {
		if _, err := params(r); err != nil {
			return nil, err
		}
		return a.p.Head(r.Context())
	})
	get(mux, "GET /api/kinds", func(r *http.Request) (*KindsResult, error) {
		if _, err := params(r); err != nil {
			return nil, err
		}
		return &KindsResult{Kinds: project.EventKinds()}, nil
	})
	get(mux, "GET /api/log", func(r *http.Request) (*project.LogResult, error) {
		req, err := logRequest(r)
		if err != nil {
			return nil, err
		}
		return a.p.Log(r.Context(), req)
	})
	get(mux, "GET /api/status", func(r *http.Request) (*project.StatusResult, error) {
		at, err := readAt(r)
		if err != nil {
			return nil, err
		}
		return a.p.Status(r.Context(), project.StatusRequest{Read: at})
	})
	get(mux, "GET /api/state", func(r *http.Request) (*StateResult, error) {
		at, err := readAt(r)
		if err != nil {
			return nil, err
		}
		return a.state(r.Context(), at)
	})
	get(mux, "GET /api/sessions", a.sessions)
	get(mux, "GET /api/seek", a.seek)
	get(mux, "GET /api/histogram", a.histogram)
	get(mux, "GET /api/lanes", a.lanes)
	get(mux, "GET /api/search", a.search)
	get(mux, "GET /api/diff", a.diff)
	mux.HandleFunc("GET /api/export", a.export)
	get(mux, "GET /api/verify", func(r *http.Request) (*VerifyAnswer, error) {
		q, err := params(r, "fresh")
		if err != nil {
			return nil, err
		}
		return a.verify(r.Context(), q.get("fresh") == "1")
	})
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		answer[struct{}](w, nil, fault.New(fault.NotFound, "ui: no API at %s", r.URL.Path).
			With("path", r.URL.Path).WithHint("awr ui"))
	})
}

// get routes pattern to f: the answer is f's result as JSON, or its
// error's object with the status its code maps to (answer).
func get[T any](mux *http.ServeMux, pattern string, f func(*http.Request) (*T, error)) {
	mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		v, err := f(r)
		answer(w, v, err)
	})
}

// readAt reads a query that may hold only ?at=REV: the revision to read
// at, or the present.
func readAt(r *http.Request) (project.Read, error) {
	_, at, err := paramsAt(r, "at")
	return at, err
}

// sessions answers /api/sessions[?at=REV&cursor=C&limit=N&active=1&work=KEY]:
// one page of `awr session list --newest` (SessionPage sessions unless
// asked, at most MaxSessionPage), with the count of them all and the
// cursor of the next page. A page read after the head moved is read at
// the revision ?at names, so that a walk over the pages lists each
// session of that revision once.
func (a *api) sessions(r *http.Request) (*project.SessionList, error) {
	q, at, err := paramsAt(r, "at", "cursor", "limit", "active", "work")
	if err != nil {
		return nil, err
	}
	limit, err := q.bounded("limit", SessionPage, MaxSessionPage, "a page holds 1 to %d sessions (the page reads the sessions a page at a time)")
	if err != nil {
		return nil, err
	}
	active := false
	switch v := q.get("active"); v {
	case "", "0":
	case "1":
		active = true
	default:
		return nil, fault.New(fault.InvalidInput, "ui: ?active=%s: give 1 (only active sessions) or 0", v).With("field", "active")
	}
	return a.p.SessionList(r.Context(), project.SessionListRequest{Read: at, Newest: true, Limit: &limit, Cursor: q.get("cursor"), Active: active, Work: q.get("work")})
}

// seek answers /api/seek?time=T (UTC ms, or an RFC 3339 time) [&at=REV].
func (a *api) seek(r *http.Request) (*project.SeekResult, error) {
	q, at, err := paramsAt(r, "time", "at")
	if err != nil {
		return nil, err
	}
	t, err := q.time("time")
	if err != nil {
		return nil, err
	}
	if !q.has("time") {
		return nil, fault.New(fault.InvalidInput, "ui: /api/seek needs ?time= (UTC ms or an RFC 3339 time)").With("field", "time")
	}
	return a.p.Seek(r.Context(), project.SeekRequest{Read: at, Time: t})
}

// histogram answers /api/histogram?buckets=N[&from=T&to=T&at=REV].
func (a *api) histogram(r *http.Request) (*project.HistogramResult, error) {
	q, at, err := paramsAt(r, "buckets", "from", "to", "at")
	if err != nil {
		return nil, err
	}
	req := project.HistogramRequest{Read: at}
	if req.Buckets, err = q.bounded("buckets", 100, project.MaxHistogramBuckets, "a histogram has 1 to %d buckets"); err != nil {
		return nil, err
	}
	if req.From, err = q.time("from"); err != nil {
		return nil, err
	}
	if req.To, err = q.time("to"); err != nil {
		return nil, err
	}
	return a.p.Histogram(r.Context(), req)
}

// lanes answers /api/lanes?by=work|session|agent[&buckets=N&offset=K&limit=N&at=REV]:
// the timeline's lanes of a log too long for a mark per event (100
// buckets and 50 lanes unless asked).
func (a *api) lanes(r *http.Request) (*project.LanesResult, error) {
	q, at, err := paramsAt(r, "by", "buckets", "offset", "limit", "at")
	if err != nil {
		return nil, err
	}
	req := project.LanesRequest{Read: at, By: q.get("by"), Buckets: 100, Limit: 50}
	for _, f := range []struct {
		name string
		to   *int
	}{{"buckets", &req.Buckets}, {"offset", &req.Offset}, {"limit", &req.Limit}} {
		if q.has(f.name) {
			n, err := q.int(f.name)
			if err != nil {
				return nil, err
			}
			*f.to = int(n) // Lanes says what is out of range
		}
	}
	return a.p.Lanes(r.Context(), req)
}

// search answers /api/search?q=WORDS[&limit=N&at=REV]: the project's
// full-text index (awr search), each hit with the seq it was written at.
func (a *api) search(r *http.Request) (*project.SearchResult, error) {
	q, at, err := paramsAt(r, "q", "limit", "at", "kind")
	if err != nil {
		return nil, err
	}
	limit, err := q.bounded("limit", 20, MaxSearch, "a search answers 1 to %d hits")
	if err != nil {
		return nil, err
	}
	return a.p.Search(r.Context(), project.SearchRequest{Read: at, Query: q.get("q"), Kind: q.get("kind"), Limit: &limit})
}

// diff answers /api/diff?from=R1[&to=R2&work=KEY&session=ID]: awr diff.
func (a *api) diff(r *http.Request) (*project.DiffResult, error) {
	q, err := params(r, "from", "to", "work", "session")
	if err != nil {
		return nil, err
	}
	from, err := q.int("from")
	if err != nil {
		return nil, err
	}
	// The page bounds the span (MaxDiffSpan, below) and shows it whole.
	req := project.DiffRequest{From: from, Work: q.get("work"), Session: q.get("session"), Whole: true}
	to := int64(0)
	if q.has("to") {
		if to, err = q.int("to"); err != nil {
			return nil, err
		}
		req.To = &to
	} else {
		h, err := a.p.Head(r.Context())
		if err != nil {
			return nil, err
		}
		to = h.ProjectRevision
	}
	// A diff lists every event between its revisions: the page asks for
	// a span it can hold, and the CLI compares any two.
	if to-from > MaxDiffSpan {
		return nil, fault.New(fault.InvalidInput, "ui: a diff from %d to %d spans %d revisions; the page compares at most %d apart (awr diff compares any two)", from, to, to-from, MaxDiffSpan).
			With("field", "to").With("max_span", MaxDiffSpan).WithHint("awr diff --from %d --to %d", from, to)
	}
	return a.p.Diff(r.Context(), req)
}

// MaxDiffSpan bounds the revisions one /api/diff compares: its answer
// lists each event between them.
const MaxDiffSpan = 20000

// state reads the status, the sessions and the work items at one
// revision: the head's when the read names none, so that the three agree.
func (a *api) state(ctx context.Context, at project.Read) (*StateResult, error) {
	st, err := a.p.Status(ctx, project.StatusRequest{Read: at})
	if err != nil {
		return nil, err
	}
	rev := st.ProjectRevision
	at = project.Read{At: &rev}
	page := SessionPage
	ss, err := a.p.SessionList(ctx, project.SessionListRequest{Read: at, Newest: true, Limit: &page})
	if err != nil {
		return nil, err
	}
	ready, err := a.p.Ready(ctx, project.ReadyRequest{Read: at, All: true})
	if err != nil {
		return nil, err
	}
	return &StateResult{ProjectRevision: rev, Head: st.Head, Status: st, Sessions: ss, Ready: ready}, nil
}

// verify runs `awr verify` unless its last result is of the current head
// (and fresh is false): a row edited under the head is found when the
// head moves, or by a fresh verification.
func (a *api) verify(ctx context.Context, fresh bool) (*VerifyAnswer, error) {
	a.verifyMu.Lock()
	defer a.verifyMu.Unlock()
	head, err := a.p.Head(ctx)
	if err != nil {
		return nil, err
	}
	if l := a.last; !fresh && l != nil && l.ProjectRevision == head.ProjectRevision && l.HeadHash == head.HeadHash {
		return l, nil
	}
	res, err := a.p.Verify(ctx, project.VerifyRequest{})
	if res == nil {
		return nil, err
	}
	ans := &VerifyAnswer{VerifyResult: res, VerifiedAt: time.Now().UTC().UnixMilli()}
	if err != nil {
		o := fault.ObjectOf(err)
		ans.Error = &o
	}
	a.last = ans
	return ans, nil
}

// logRequest reads `awr log`'s flags from the query. The page size is
// bounded (1 to MaxPage; DefaultPage without ?limit): 0, which is "all"
// on the CLI, is refused here.
func logRequest(r *http.Request) (project.LogRequest, error) {
	q, at, err := paramsAt(r, "at", "session", "work", "kind", "since", "until", "limit")
	if err != nil {
		return project.LogRequest{}, err
	}
	req := project.LogRequest{Read: at, Session: q.get("session"), Work: q.get("work"), Kind: q.get("kind")}
	if req.Since, err = q.int("since"); err != nil {
		return req, err
	}
	if req.Until, err = q.int("until"); err != nil {
		return req, err
	}
	limit, err := q.bounded("limit", DefaultPage, MaxPage, "a page holds 1 to %d events (the page reads the log a page at a time)")
	if err != nil {
		return req, err
	}
	req.Limit = &limit
	return req, nil
}

// query is a request's query string, parsed strictly.
type query url.Values

// params parses the query of r strictly: malformed (a bad escape, a
// semicolon), a parameter the endpoint does not take, or one given twice
// is InvalidInput, never ignored.
func params(r *http.Request, allowed ...string) (query, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, fault.New(fault.InvalidInput, "ui: the query of %s is malformed: %v", r.URL.Path, err).With("path", r.URL.Path)
	}
	for k, vs := range v {
		if !slices.Contains(allowed, k) {
			return nil, fault.New(fault.InvalidInput, "ui: %s takes no parameter %q (it takes: %s)", r.URL.Path, k, strings.Join(allowed, ", ")).
				With("path", r.URL.Path).With("parameter", k)
		}
		if len(vs) > 1 {
			return nil, fault.New(fault.InvalidInput, "ui: ?%s= is given %d times", k, len(vs)).With("parameter", k)
		}
	}
	return query(v), nil
}

// paramsAt is params, and the revision the request reads at (?at=REV,
// which allowed names; absent: the head).
func paramsAt(r *http.Request, allowed ...string) (query, project.Read, error) {
	q, err := params(r, allowed...)
	if err != nil {
		return nil, project.Read{}, err
	}
	at, err := q.read()
	if err != nil {
		return nil, project.Read{}, err
	}
	return q, at, nil
}

func (q query) has(k string) bool   { return url.Values(q).Has(k) }
func (q query) get(k string) string { return url.Values(q).Get(k) }

// read reads ?at=REV (absent: the head).
func (q query) read() (project.Read, error) {
	if !q.has("at") {
		return project.Read{}, nil
	}
	n, err := q.int("at")
	if err != nil {
		return project.Read{}, err
	}
	if n < 0 {
		return project.Read{}, fault.New(fault.InvalidInput, "ui: ?at=%d: a revision is 0 or more", n).With("field", "at").With("min", 0)
	}
	return project.Read{At: &n}, nil
}

// int reads a decimal parameter; absent is 0.
func (q query) int(name string) (int64, error) {
	v := q.get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fault.New(fault.InvalidInput, "ui: ?%s=%s is not a decimal integer", name, v).With(name, v)
	}
	return n, nil
}

// bounded reads a count parameter from 1 to max; absent is def. Out of
// range is InvalidInput whose message is "ui: ?NAME=N: " and what, with
// max in place of its %d.
func (q query) bounded(name string, def, max int, what string) (int, error) {
	if !q.has(name) {
		return def, nil
	}
	n, err := q.int(name)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > int64(max) {
		return 0, fault.New(fault.InvalidInput, "ui: ?%s=%d: "+what, name, n, max).
			With("field", name).With("min", 1).With("max", max)
	}
	return int(n), nil
}

// time reads a time parameter: UTC milliseconds or an RFC 3339 time;
// absent is 0.
func (q query) time(name string) (int64, error) {
	v := q.get(name)
	if v == "" {
		return 0, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, fault.New(fault.InvalidInput, "ui: ?%s=%d: a time is 0 or more (UTC ms)", name, n).With(name, v)
		}
		return n, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return 0, fault.New(fault.InvalidInput, "ui: ?%s=%s is neither UTC milliseconds nor an RFC 3339 time (2026-12-01T20:32:05Z)", name, v).With(name, v)
	}
	return t.UnixMilli(), nil
}

// answer writes v as JSON, or err as the one error object (fault.Object)
// with a status that says its class.
func answer[T any](w http.ResponseWriter, v *T, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var body any = v
	if err != nil {
		switch fault.CodeOf(err) {
		case fault.InvalidInput, fault.Usage:
			w.WriteHeader(http.StatusBadRequest)
		case fault.NotFound:
			w.WriteHeader(http.StatusNotFound)

		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
		body = fault.ObjectOf(err)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
}

// refuse writes err as the one JSON error object with status: the
// refusals made before any API is reached (another Host or Origin, a
// method other than GET and HEAD), for the page and the API alike.
func refuse(w http.ResponseWriter, status int, err error) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(fault.ObjectOf(err))
}

// MaxExport bounds the events of one /api/export answer.
const MaxExport = 100000

// export answers /api/export: the events /api/log would list with the
// same filters (?limit up to MaxExport, default 10,000), one envelope per
// line (JSONL, as `awr export` writes them), read and written a page at a
// time: the server holds one page, never the range.
func (a *api) export(w http.ResponseWriter, r *http.Request) {
	req, err := logRequest(withoutLimit(r))
	if err != nil {
		answer[struct{}](w, nil, err)
		return
	}
	q, _ := params(r, "at", "session", "work", "kind", "since", "until", "limit")
	total, err := q.bounded("limit", 10000, MaxExport, "an export holds 1 to %d events")
	if err != nil {
		answer[struct{}](w, nil, err)
		return
	}
	page := MaxPage
	req.Limit = &page
	// The first page is read before anything is written, so that an
	// error is still a JSON answer.
	res, err := a.p.Log(r.Context(), req)
	if err != nil {
		answer[struct{}](w, nil, err)
		return
	}
	at := res.ProjectRevision
	req.At = &at
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="awr-events-%d-%d.jsonl"`, req.Since, at))
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	var n int
	for {
		for _, e := range res.Events {
			if n == total {
				return
			}
			if enc.Encode(e.Envelope) != nil {
				return
			}
			n++
		}
		if res.NextSince == 0 || n == total {
			return
		}
		req.Since = res.NextSince
		if res, err = a.p.Log(r.Context(), req); err != nil {
			return
		}
	}
}

// withoutLimit is r with ?limit left out of its query (an export's limit
// is its own; the page size is the API's).
func withoutLimit(r *http.Request) *http.Request {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return r
	}
	v.Del("limit")
	r2 := r.Clone(r.Context())
	r2.URL.RawQuery = v.Encode()
	return r2
}
