package ui

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
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
// list --at N` and `awr ready --all --at N` answer, all at one revision.
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

func (a *api) routes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/head", func(w http.ResponseWriter, r *http.Request) {
		v, err := a.p.Head(r.Context())
		answer(w, v, err)
	})
	mux.HandleFunc("GET /api/kinds", func(w http.ResponseWriter, r *http.Request) {
		answer(w, &KindsResult{Kinds: project.EventKinds()}, nil)
	})
	mux.HandleFunc("GET /api/log", func(w http.ResponseWriter, r *http.Request) {
		req, err := logRequest(r)
		if err != nil {
			answer[project.LogResult](w, nil, err)
			return
		}
		v, err := a.p.Log(r.Context(), req)
		answer(w, v, err)
	})
	mux.HandleFunc("GET /api/status", func(w http.ResponseWriter, r *http.Request) {
		at, err := readOf(r)
		if err != nil {
			answer[project.StatusResult](w, nil, err)
			return
		}
		v, err := a.p.Status(r.Context(), project.StatusRequest{Read: at})
		answer(w, v, err)
	})
	mux.HandleFunc("GET /api/state", func(w http.ResponseWriter, r *http.Request) {
		at, err := readOf(r)
		if err != nil {
			answer[StateResult](w, nil, err)
			return
		}
		v, err := a.state(r.Context(), at)
		answer(w, v, err)
	})
	mux.HandleFunc("GET /api/verify", func(w http.ResponseWriter, r *http.Request) {
		v, err := a.verify(r.Context(), r.URL.Query().Get("fresh") == "1")
		answer(w, v, err)
	})
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		answer[struct{}](w, nil, fault.New(fault.NotFound, "ui: no API at %s", r.URL.Path).
			With("path", r.URL.Path).WithHint("awr ui"))
	})
}

// state reads the status, the sessions and the work items at one
// revision: the head's when the read names none, so that the three agree.
func (a *api) state(ctx context.Context, at project.Read) (*StateResult, error) {
	st, err := a.p.Status(ctx, project.StatusRequest{Read: at})
	if err != nil {
		return nil, err
	}
	rev := st.ProjectRevision
	at = project.Read{At: &rev}
	ss, err := a.p.SessionList(ctx, project.SessionListRequest{Read: at})
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

// logRequest reads `awr log`'s flags from the query.
func logRequest(r *http.Request) (project.LogRequest, error) {
	q := r.URL.Query()
	at, err := readOf(r)
	if err != nil {
		return project.LogRequest{}, err
	}
	req := project.LogRequest{Read: at, Session: q.Get("session"), Work: q.Get("work"), Kind: q.Get("kind")}
	if req.Since, err = intParam(r, "since"); err != nil {
		return req, err
	}
	if req.Until, err = intParam(r, "until"); err != nil {
		return req, err
	}
	if q.Has("limit") {
		n, err := intParam(r, "limit")
		if err != nil {
			return req, err
		}
		l := int(n)
		req.Limit = &l
	}
	return req, nil
}

// readOf reads ?at=REV (absent: the head).
func readOf(r *http.Request) (project.Read, error) {
	if !r.URL.Query().Has("at") {
		return project.Read{}, nil
	}
	n, err := intParam(r, "at")
	if err != nil {
		return project.Read{}, err
	}
	return project.Read{At: &n}, nil
}

// intParam reads a decimal query parameter; absent is 0.
func intParam(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fault.New(fault.InvalidInput, "ui: ?%s=%s is not a decimal integer", name, v).With(name, v)
	}
	return n, nil
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
