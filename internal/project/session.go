package project

import (
	"context"
	"fmt"
	"slices"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/idle"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/projections"
)

// Checkpoint is one recorded checkpoint, as `awr session show` lists it.
type Checkpoint = projections.Checkpoint

// SessionView is `awr session show`: a session with its claims,
// checkpoints and bindings.
type SessionView struct {
	Session projections.Session `json:"session"`
	// Claims are a page of the session's claims, the highest fencing
	// token first (after the request's claims cursor), of ClaimsTotal in
	// all; when more follow, ClaimsNextCursor is the --claims-cursor of
	// the next page.
	Claims           []projections.Claim `json:"claims"`
	ClaimsTotal      int                 `json:"claims_total"`
	ClaimsNextCursor string              `json:"claims_next_cursor,omitempty"`
	// Checkpoints are a page of the session's checkpoints, oldest first:
	// its latest (or the latest before the request's checkpoints
	// cursor), of CheckpointsTotal in all; when older ones exist,
	// CheckpointsNextCursor is the --checkpoints-cursor that lists them.
	Checkpoints           []projections.Checkpoint `json:"checkpoints"`
	CheckpointsTotal      int                      `json:"checkpoints_total"`
	CheckpointsNextCursor string                   `json:"checkpoints_next_cursor,omitempty"`
	// Bindings are a page of the conversations bound to the session, by
	// external session (after the request's bindings cursor), of
	// BindingsTotal in all; when more follow, BindingsNextCursor is the
	// --bindings-cursor of the next page.
	Bindings           []projections.Binding `json:"bindings"`
	BindingsTotal      int                   `json:"bindings_total"`
	BindingsNextCursor string                `json:"bindings_next_cursor,omitempty"`
	// Knowledge is the session's work item's loops, decisions, facts and
	// hypotheses at the revision: a page of the items in force (open
	// loops, then decisions, facts and hypotheses, each by number),
	// KnowledgeTotal counting every one and, when more follow,
	// KnowledgeNextCursor the --knowledge-cursor of the next page; and
	// the latest items closed since the session's last checkpoint.
	Knowledge           *projections.KnowledgeState `json:"knowledge"`
	KnowledgeTotal      int                         `json:"knowledge_total"`
	KnowledgeNextCursor string                      `json:"knowledge_next_cursor,omitempty"`
	ProjectRevision     int64                       `json:"project_revision"`
}

// SessionShowRequest is `awr session show` and awr_session_show.
type SessionShowRequest struct {
	Session string `arg:"" name:"session" json:"session" help:"Session id." placeholder:"ID"`
	// CheckpointsCursor, KnowledgeCursor, ClaimsCursor, BindingsCursor,
	// Limit and All select the pages of the session's checkpoints, of its
	// work's knowledge in force, of its claims and of its bindings.
	CheckpointsCursor string `name:"checkpoints-cursor" json:"checkpoints_cursor,omitempty" help:"List the checkpoints before those of the page before: its checkpoints_next_cursor." placeholder:"CURSOR"`
	KnowledgeCursor   string `name:"knowledge-cursor" json:"knowledge_cursor,omitempty" help:"List the items in force (open loops, decisions, facts, hypotheses) after this place: the knowledge_next_cursor of the page before." placeholder:"CURSOR"`
	ClaimsCursor      string `name:"claims-cursor" json:"claims_cursor,omitempty" help:"List the claims after those of the page before (highest fencing token first): its claims_next_cursor." placeholder:"CURSOR"`
	BindingsCursor    string `name:"bindings-cursor" json:"bindings_cursor,omitempty" help:"List the bound conversations after those of the page before: its bindings_next_cursor." placeholder:"CURSOR"`
	Limit             *int   `name:"limit" json:"limit,omitempty" help:"At most N checkpoints, N items in force, N claims and N bindings (1 to 200; default 50, or all with --all)." placeholder:"N"`
	All               bool   `name:"all" json:"all,omitempty" help:"Every checkpoint, item in force, claim and binding (no page): the CLI writes the checkpoints as they are read."`
	Read
}

// SessionShow returns a session with its claims, checkpoints and bindings
// as of the request's revision. Its checkpoints and its work's knowledge
// in force are a page each (Limit, else commands.DefaultPage; every one
// with All): the latest checkpoints before the CheckpointsCursor, oldest
// first, with checkpoints_total and checkpoints_next_cursor (the older
// ones); the items in force after the KnowledgeCursor, with
// knowledge_total and knowledge_next_cursor; so are its claims (after
// the ClaimsCursor, claims_total, claims_next_cursor) and its bindings
// (after the BindingsCursor, bindings_total, bindings_next_cursor).
// Errors: NotFound for a session unknown at that revision; InvalidInput
// for a limit outside 1 to commands.MaxLimit, or a cursor awr did not
// give or beyond the revision read (details.flag names it).
func (p *Project) SessionShow(ctx context.Context, req SessionShowRequest) (*SessionView, error) {
	var v *SessionView
	err := p.sessionShow(ctx, req, func(sv *SessionView) error {
		v = sv
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// SessionShowEach is SessionShow with every checkpoint before the
// request's checkpoints cursor given to each, oldest first, one at a
// time, instead of held (`awr session show --all`): start gets the view
// first, its checkpoints empty (checkpoints_total counts them all) and
// every item in force after the knowledge cursor. req.Limit and req.All
// are ignored. start's or each's error ends the read and is returned.
// Errors: those of SessionShow, and those start and each return.
func (p *Project) SessionShowEach(ctx context.Context, req SessionShowRequest, start func(*SessionView) error, each func(projections.Checkpoint) error) error {
	req.Limit, req.All = nil, true
	return p.sessionShow(ctx, req, start, each)
}

// sessionShow reads the session of req and gives its view to start:
// with its page of checkpoints when each is nil, else with none, then
// each checkpoint to each.
func (p *Project) sessionShow(ctx context.Context, req SessionShowRequest, start func(*SessionView) error, each func(projections.Checkpoint) error) error {
	id := req.Session
	first := "awr session show " + shellwords.Quote(id) + atHint(req.Read)
	pg, err := knowledgePage("session show", req.Limit, req.All, req.KnowledgeCursor, first)
	if err != nil {
		return err
	}
	before, err := cursor.DecodeSeq("session show", "--checkpoints-cursor", req.CheckpointsCursor, first)
	if err != nil {
		return err
	}
	claimsAfter, err := cursor.DecodeClaim("session show", req.ClaimsCursor, first)
	if err != nil {
		return err
	}
	bindingsAfter, err := cursor.DecodeBinding("session show", req.BindingsCursor, first)
	if err != nil {
		return err
	}
	v := &SessionView{}
	return p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		v.ProjectRevision = rev
		s, err := projections.SessionAt(r.Conn, id, rev)
		if err != nil {
			return err
		}
		if s == nil {
			return fault.New(fault.NotFound, "session show: session %s not found at revision %d", id, rev).With("session_id", id).WithHint("awr session list")
		}
		v.Session = *s
		if err := v.claimsPage(r, rev, claimsAfter, pg.limit); err != nil {
			return err
		}
		limit := pg.limit
		if each != nil {
			limit = -1 // none: they are streamed
		}
		upTo, err := v.checkpointsPage(r, rev, before, limit, first)
		if err != nil {
			return err
		}
		since := rev
		if s.LastCheckpointSeq > 0 {
			since = s.LastCheckpointSeq - 1
		}
		// The page alone is read, not every item in force.
		var last *projections.KnowledgePlace
		v.Knowledge, v.KnowledgeTotal, last, err = projections.KnowledgePageAt(r.Conn, s.Work, rev, since, rev == r.Head, pg.after, pg.limit)
		if err != nil {
			return err
		}
		if last != nil {
			v.KnowledgeNextCursor = cursor.EncodeKnowledge(*last)
		}
		if err := v.bindingsPage(r, rev, bindingsAfter, pg.limit); err != nil {
			return err
		}
		if v.Claims == nil {
			v.Claims = []projections.Claim{}
		}
		if v.Checkpoints == nil {
			v.Checkpoints = []projections.Checkpoint{}
		}
		if v.Bindings == nil {
			v.Bindings = []projections.Binding{}
		}
		if err := start(v); err != nil || each == nil {
			return err
		}
		return projections.EachSessionCheckpointAt(r.Conn, s.ID, upTo, each)
	})
}

// claimsPage reads the page of v's session's claims at rev: at most
// limit (0: every one) after the place after, their total, and the
// cursor of the next page when more follow.
func (v *SessionView) claimsPage(r *events.Reader, rev int64, after *projections.ClaimPlace, limit int) (err error) {
	if v.ClaimsTotal, err = projections.SessionClaimCountAt(r.Conn, v.Session.ID, rev); err != nil {
		return err
	}
	var more bool
	if v.Claims, more, err = projections.SessionClaimsPageAt(r.Conn, v.Session.ID, rev, after, limit); err != nil {
		return err
	}
	if more {
		v.ClaimsNextCursor = cursor.EncodeClaim(projections.PlaceOfClaim(&v.Claims[len(v.Claims)-1]))
	}
	return nil
}

// bindingsPage reads the page of the conversations bound to v's session
// at rev: at most limit (0: every one) after the external session
// after, their total, and the cursor of the next page when more follow.
func (v *SessionView) bindingsPage(r *events.Reader, rev int64, after string, limit int) (err error) {
	if v.BindingsTotal, err = projections.SessionBindingCountAt(r.Conn, v.Session.ID, rev); err != nil {
		return err
	}
	var more bool
	if v.Bindings, more, err = projections.SessionBindingsPageAt(r.Conn, v.Session.ID, rev, after, limit); err != nil {
		return err
	}
	if more {
		v.BindingsNextCursor = cursor.EncodeBinding(v.Bindings[len(v.Bindings)-1].ExternalSession)
	}
	return nil
}

// checkpointsPage reads the page of v's session's checkpoints at rev:
// the latest limit (0: every one; negative: none) recorded before seq
// before (0: by rev), oldest first, their total, and the cursor of the
// older ones when there are; first is the command of the first page. It
// returns the seq the page's checkpoints are recorded by.
// Errors: InvalidInput naming --checkpoints-cursor for a cursor beyond
// rev.
func (v *SessionView) checkpointsPage(r *events.Reader, rev, before int64, limit int, first string) (upTo int64, err error) {
	id := v.Session.ID
	if before > rev+1 {
		return 0, fault.New(fault.InvalidInput, "session show: --checkpoints-cursor starts after the revision read (%d): pass the checkpoints_next_cursor of a page read at it", rev).
			With("flag", "--checkpoints-cursor").WithHint("%s", first)
	}
	upTo = rev
	if before > 0 {
		upTo = before - 1
	}
	if v.CheckpointsTotal, err = projections.SessionCheckpointCountAt(r.Conn, id, rev); err != nil {
		return 0, err
	}
	switch {
	case limit < 0:
		return upTo, nil
	case limit == 0:
		v.Checkpoints, err = projections.SessionCheckpointsAt(r.Conn, id, upTo)
		return upTo, err
	}
	// One more says whether older ones exist.
	if v.Checkpoints, err = projections.SessionLatestCheckpointsAt(r.Conn, id, upTo, limit+1); err != nil {
		return 0, err
	}
	if len(v.Checkpoints) > limit {
		v.Checkpoints = v.Checkpoints[1:]
		v.CheckpointsNextCursor = cursor.EncodeSeq(v.Checkpoints[0].Seq)
	}
	return upTo, nil
}

// SessionList is `awr session list`: one page of the sessions the
// filters select, oldest first.
type SessionList struct {
	Sessions []SessionEntry `json:"sessions"`
	// SessionsTotal counts every session the filters select, StaleCount
	// the stale ones among them, on every page.
	SessionsTotal   int   `json:"sessions_total"`
	StaleCount      int   `json:"stale_count"`
	ProjectRevision int64 `json:"project_revision"`
	// NextCursor, when more sessions follow this page, is the --cursor
	// of the next.
	NextCursor string `json:"next_cursor,omitempty"`
}

// SessionEntry is one session of a list: the session and whether it is
// stale (see StaleSession), with the command that ends it when it is.
type SessionEntry struct {
	projections.Session
	Stale bool `json:"stale"`
	// IdleSince is the occurred_at (UTC ms) of the stale session's last
	// event; EndCommand ends it. Both are set only when Stale is.
	IdleSince  int64  `json:"idle_since,omitempty"`
	EndCommand string `json:"end_command,omitempty"`
}

// SessionListRequest is `awr session list` and awr_session_list.
type SessionListRequest struct {
	Active bool   `name:"active" json:"active,omitempty" help:"Only active sessions (stale ones included)."`
	Stale  bool   `name:"stale" json:"stale,omitempty" help:"Only stale sessions: active, idle past the project's lease and holding no live claim."`
	Work   string `name:"work" json:"work,omitempty" help:"Only sessions on this work item." placeholder:"KEY"`
	Newest bool   `name:"newest" json:"newest,omitempty" help:"Newest first (the latest started at the top); --cursor then goes further back."`
	All    bool   `name:"all" json:"all,omitempty" help:"Every session the filters select (no page)."`
	Limit  *int   `name:"limit" json:"limit,omitempty" help:"At most N sessions (1 to 200; default 50, or all with --all)." placeholder:"N"`
	Cursor string `name:"cursor" json:"cursor,omitempty" help:"The page after this one: the next_cursor of the page before." placeholder:"CURSOR"`
	Read
}

// SessionList lists sessions oldest first (newest first with Newest),
// each marked stale or not as of the request's revision and its clock:
// one page (Limit, else commands.DefaultPage; every one with All) from
// the Cursor on, with the count of all of them and the cursor of the
// next page. It holds the page, never every session: the page is read
// in order from the sessions' read model, counted there, and the stale
// ones are found among the active ones.
// Errors: InvalidInput for a limit outside 1 to commands.MaxLimit or a
// cursor awr did not give; NotFound for a work item the log never knew.
func (p *Project) SessionList(ctx context.Context, opts SessionListRequest) (*SessionList, error) {
	out := &SessionList{Sessions: []SessionEntry{}}
	head, err := p.SessionListEach(ctx, opts, func(e SessionEntry) error {
		out.Sessions = append(out.Sessions, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.SessionsTotal, out.StaleCount, out.ProjectRevision, out.NextCursor = head.SessionsTotal, head.StaleCount, head.ProjectRevision, head.NextCursor
	return out, nil
}

// SessionListEach is SessionList that gives each session of the page to
// each as it is read, in order, instead of holding them (`awr session
// list --all` prints a long log's sessions this way): the answer it
// returns has the counts, the revision and the next cursor, and no
// sessions. each's error ends the read and is returned.
// Errors: those of SessionList.
func (p *Project) SessionListEach(ctx context.Context, opts SessionListRequest, each func(SessionEntry) error) (*SessionList, error) {
	limit, after, err := idPage("session list", opts.Limit, opts.All, opts.Cursor)
	if err != nil {
		return nil, err
	}
	out := &SessionList{}
	ttl := p.leaseTTL()
	err = p.read(ctx, opts.Read, func(r *events.Reader, rev, now int64) error {
		out.ProjectRevision = rev
		if opts.Work != "" {
			if err := commands.KnownWork(r.Conn, "session list", opts.Work, rev); err != nil {
				return err
			}
		}
		// The stale sessions are among the active ones, the live part of
		// the read model (what status counts), read whole.
		all, err := projections.ActiveSessionsAt(r.Conn, rev, rev == r.Head)
		if err != nil {
			return err
		}
		var active []projections.Session
		for _, s := range all {
			if opts.Work == "" || s.Work == opts.Work {
				active = append(active, s)
			}
		}
		stale, err := idle.Stale(r, rev, now, ttl, active)
		if err != nil {
			return err
		}
		out.StaleCount = len(stale)
		var place *projections.SessionPlace
		if after != "" {
			s, err := projections.SessionAt(r.Conn, after, rev)
			if err != nil {
				return err
			}
			if s == nil || opts.Work != "" && s.Work != opts.Work {
				return fault.New(fault.InvalidInput, "session list: --cursor names no session these filters list at revision %d: pass the next_cursor of the page before", rev).
					With("flag", "--cursor").WithHint("awr session list")
			}
			pl := projections.PlaceOfSession(s)
			place = &pl
		}
		entry := func(s projections.Session) SessionEntry {
			e := SessionEntry{Session: s}
			if st, ok := stale[s.ID]; ok {
				e.Stale, e.IdleSince, e.EndCommand = true, st.IdleSince, st.EndCommand
			}
			return e
		}
		if opts.Active || opts.Stale {
			return sessionsAmong(r, rev, active, stale, opts, place, limit, out, func(s projections.Session) error { return each(entry(s)) })
		}
		if out.SessionsTotal, err = projections.SessionCountAt(r.Conn, rev, opts.Work); err != nil {
			return err
		}
		pg := projections.SessionPage{Work: opts.Work, After: place, Newest: opts.Newest}
		if limit > 0 {
			pg.Limit = limit + 1 // one more says whether a page follows
		}
		n := 0
		var last string
		return projections.SessionsPageAt(r.Conn, rev, pg, func(s projections.Session) error {
			if limit > 0 && n == limit {
				out.NextCursor = cursor.EncodeID(last)
				return nil
			}
			n++
			last = s.ID
			return each(entry(s))
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sessionsAmong lists the page of the active sessions (the stale ones
// with opts.Stale) after place, in the list's order: they are few
// beside every session, and already read.
func sessionsAmong(r *events.Reader, rev int64, active []projections.Session, stale map[string]StaleSession, opts SessionListRequest,
	place *projections.SessionPlace, limit int, out *SessionList, each func(projections.Session) error) error {
	var sel []projections.Session
	for _, s := range active {
		if _, ok := stale[s.ID]; ok || !opts.Stale {
			sel = append(sel, s)
		}
	}
	out.SessionsTotal = len(sel)
	order := func(a, b projections.Session) int {
		c := projections.PlaceOfSession(&a).Compare(projections.PlaceOfSession(&b))
		if opts.Newest {
			return -c
		}
		return c
	}
	slices.SortFunc(sel, order)
	n := 0
	var last string
	for _, s := range sel {
		if place != nil {
			c := projections.PlaceOfSession(&s).Compare(*place)
			if opts.Newest && c >= 0 || !opts.Newest && c <= 0 {
				continue
			}
		}
		if limit > 0 && n == limit {
			out.NextCursor = cursor.EncodeID(last)
			break
		}
		// The page's sessions with their latest checkpoint and context.
		full, err := projections.SessionAt(r.Conn, s.ID, rev)
		if err != nil {
			return err
		}
		if err := each(*full); err != nil {
			return err
		}
		n++
		last = s.ID
	}
	return nil
}

// The sessions their agent left (package idle): a StaleSession ends, a
// LapsedSession resumes.
type (
	// StaleSession is a session that is active, holds no live claim, and
	// whose last event is at least the project's lease old.
	StaleSession = idle.StaleSession
	// LapsedSession is a session whose claim lapsed while it was active.
	LapsedSession = idle.LapsedSession
)

// leaseTTL is the project's lease (the manifest's continuity.claim_ttl_ms,
// the default when it is unset or the manifest does not read: a reader
// reports, it does not refuse on a manifest a write would refuse), from
// the manifest as the head memo keeps it (headmemo.Memo.LeaseTTL).
func (p *Project) leaseTTL() int64 { return p.memo.LeaseTTL(p.dir) }

// ClientView is `awr client show`: the binding, what its host needs to
// continue (Summary: checkpoint, next action, open loops, context hash,
// the same view client bind returns) and, when the bound session has been
// resumed, its successor and whether the conversation may follow it.
type ClientView struct {
	Binding         *projections.Binding    `json:"binding"`
	Summary         *commands.BindingView   `json:"summary"`
	Successor       *commands.SuccessorView `json:"successor,omitempty"`
	ProjectRevision int64                   `json:"project_revision"`
}

// ClientShowRequest is `awr client show` and awr_client_show.
type ClientShowRequest struct {
	Client          string `name:"client" json:"client,omitempty" help:"The host: claude, codex, gemini or opencode (the id as the host reports it); omit it for a generic HOST:ID." placeholder:"NAME"`
	ExternalSession string `name:"external-session" required:"" json:"external_session" help:"The host's conversation id: as claude, codex, gemini or opencode report it (with --client); HOST:ID otherwise." placeholder:"ID"`
	Read
}

// ClientShow returns what a host conversation is bound to, with what its
// host needs to continue.
// Errors: InvalidInput for a malformed id (see commands.ConversationKey);
// NotFound when it is not bound at that revision.
func (p *Project) ClientShow(ctx context.Context, req ClientShowRequest) (*ClientView, error) {
	key := req.ExternalSession
	if req.Client != "" {
		var err error
		if key, err = commands.ConversationKey("client show", req.Client, req.ExternalSession); err != nil {
			return nil, err
		}
	}
	v := &ClientView{}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		v.ProjectRevision = rev
		var err error
		v.Binding, err = projections.BindingAt(r.Conn, key, rev)
		if err == nil && v.Binding == nil {
			hint := fault.New(fault.NotFound, "client show: %s is not bound", key).With("external_session", key)
			if req.Client != "" {
				return hint.WithHint("awr client bind --client %s --external-session %s --work KEY --session ID", req.Client, req.ExternalSession)
			}
			return hint.WithHint("awr client bind --client NAME --external-session %s --work KEY --session ID", key)
		}
		if err != nil {
			return err
		}
		v.Summary, v.Successor, err = commands.BindingSummary(r.Conn, rev, atHint(req.Read), v.Binding)
		return err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// checkpointPage bounds a checkpoint's answer: what the checkpoint
// changed stays whole (res.Checkpoint.Changes, and the items it closed,
// res.Knowledge.Closed), the items in force are their first page
// (commands.DefaultPage, in the order session show pages them), with
// knowledge_total and, when more follow, the cursor and the command of
// `awr session show` that lists the next page. res is changed and
// returned.
func checkpointPage(res *CheckpointResult) *CheckpointResult {
	var last *projections.KnowledgePlace
	res.Knowledge, res.KnowledgeTotal, last = res.Knowledge.InForcePage(nil, commands.DefaultPage)
	if last != nil {
		res.KnowledgeNextCursor, res.KnowledgeNextCommand = commands.KnowledgeNext(res.Checkpoint.SessionID, *last, "")
	}
	return res
}

// inForcePage is the page of a work item's knowledge in force a read
// asks for: the place it starts after (nil: the first) and its size (0:
// every item).
type inForcePage struct {
	after *projections.KnowledgePlace
	limit int
}

// knowledgePage checks the page of the knowledge in force op's request
// asks for: n items (pageLimit), or every one with all, after the place
// cur encodes; first is the command of the first page.
// Errors: InvalidInput for a limit outside 1 to commands.MaxLimit, or a
// --knowledge-cursor awr did not give.
func knowledgePage(op string, n *int, all bool, cur, first string) (inForcePage, error) {
	limit, err := pageLimit(op, n, all)
	if err != nil {
		return inForcePage{}, err
	}
	after, err := cursor.DecodeKnowledge(op, cur, first)
	return inForcePage{after: after, limit: limit}, err
}

// atHint is the part of a hint that reads at the request's revision:
// " --at REV" for a read in the past, "" at the head.
func atHint(r Read) string {
	if !r.Past() {
		return ""
	}
	return fmt.Sprintf(" --at %d", *r.At)
}
