package audit

import (
	"encoding/hex"
	"slices"
	"strconv"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
	"zombiezen.com/go/sqlite"
)

// auditSession is what the first pass over the log learns of a session.
type auditSession struct {
	work, predecessor string
}

// Gather builds the report of one subject, the session chain of session
// or the work item work (one of them), from the log on conn up to rev:
// a first pass finds the sessions and how they resumed each other, a
// second collects every event of the subject's sessions and work.
func Gather(conn *sqlite.Conn, session, work string, rev int64) (*Report, error) {
	req := struct{ Session, Work string }{session, work}
	rep := &Report{
		ProjectRevision: rev,
		Work:            []WorkItem{}, Sessions: []Session{}, Claims: []ClaimEvent{},
		Checkpoints: []Checkpoint{}, Resumes: []Resume{}, Restatements: []Restatement{},
		Bindings: []Binding{}, HostEvents: []HostEvent{}, Executions: []Execution{},
		Evidence: []Evidence{}, Verifications: []Verification{},
	}
	sessions, successors, err := firstPass(conn, rep, rev)
	if err != nil {
		return nil, err
	}
	inSet, works, err := subjectOf(conn, rep, req.Session, req.Work, rev, sessions, successors)
	if err != nil {
		return nil, err
	}
	if err := workItems(conn, rep, works, rev); err != nil {
		return nil, err
	}

	// The second pass: every event of the subject.
	concerns := func(session, work string) bool {
		if req.Work != "" {
			return work == req.Work
		}
		return inSet[session]
	}
	g := &auditGather{conn: conn, rep: rep, sessionAt: map[string]int{}, execAt: map[string]int{}, tokens: map[string]int64{}, moved: map[string]movedHalf{}}
	err = events.ScanEvents(conn, 1, rev, func(e *events.Event) error {
		if !auditKinds[e.Kind] {
			return nil
		}
		v, err := events.Decode(e)
		if err != nil {
			return err
		}
		return g.add(e, v, inSet, concerns)
	})
	if err != nil {
		return nil, err
	}
	for i := range rep.Sessions {
		s := &rep.Sessions[i]
		for _, next := range successors[s.ID] {
			if inSet[next] {
				s.ResumedBy = append(s.ResumedBy, next)
			}
		}
		slices.Sort(s.ResumedBy)
	}

	// The chain's verdict, by the code path of awr verify: the first
	// fault, if any, breaks the report only when it lies at or before
	// the revision reported on.
	_, _, bad, err := replay.VerifyChain(conn)
	if err != nil {
		return nil, err
	}
	rep.Chain = Chain{Verified: true, Through: rev}
	if bad != nil && bad.Seq <= rev {
		rep.Chain = Chain{Verified: false, Through: rev, FirstBadSeq: bad.Seq, Problem: bad.Problem}
	}
	return rep, nil
}

// firstPass reads the project, the head and every session (its work and
// predecessor) and the successors of each, up to rev.
func firstPass(conn *sqlite.Conn, rep *Report, rev int64) (map[string]auditSession, map[string][]string, error) {
	sessions := map[string]auditSession{}
	successors := map[string][]string{}
	err := events.ScanEvents(conn, 1, rev, func(e *events.Event) error {
		switch e.Kind {
		case events.KindProjectInitialized:
			pl, err := events.InitializedBy(e)
			if err != nil {
				return err
			}
			rep.ProjectID, rep.ProjectName = pl.ProjectID, pl.Name
		case events.KindSessionStarted:
			v, err := events.Decode(e)
			if err != nil {
				return err
			}
			pl := v.(*events.SessionStarted)
			sessions[pl.SessionID] = auditSession{work: pl.Work, predecessor: pl.PredecessorID}
			if pl.PredecessorID != "" {
				successors[pl.PredecessorID] = append(successors[pl.PredecessorID], pl.SessionID)
			}
		}
		if e.Seq == rev {
			rep.HeadHash, rep.HeadAt = hex.EncodeToString(e.Hash), Time(e.OccurredAt)
		}
		return nil
	})
	return sessions, successors, err
}

// subjectOf sets the report's subject and returns its sessions (inSet)
// and work items: every session on the work item, or the session's chain
// (its predecessors and, breadth first, every session that resumed from
// one of them). Errors: NotFound for an unknown work item or session.
func subjectOf(conn *sqlite.Conn, rep *Report, session, work string, rev int64, sessions map[string]auditSession, successors map[string][]string) (inSet, works map[string]bool, err error) {
	req := struct{ Session, Work string }{session, work}
	inSet, works = map[string]bool{}, map[string]bool{}
	if req.Work != "" {
		rep.Subject = Subject{Kind: SubjectWork, ID: req.Work}
		if err := commands.KnownWork(conn, "audit", req.Work, rev); err != nil {
			return nil, nil, err
		}
		works[req.Work] = true
		for id, s := range sessions {
			if s.work == req.Work {
				inSet[id] = true
			}
		}
	} else {
		rep.Subject = Subject{Kind: SubjectSession, ID: req.Session}
		if _, ok := sessions[req.Session]; !ok {
			return nil, nil, fault.New(fault.NotFound, "audit: session %s not found at revision %d", req.Session, rev).
				With("session_id", req.Session).WithHint("awr session list")
		}
		for id := req.Session; id != "" && !inSet[id]; id = sessions[id].predecessor {
			inSet[id] = true
		}
		for queue := []string{req.Session}; len(queue) > 0; queue = queue[1:] {
			for _, next := range successors[queue[0]] {
				if !inSet[next] {
					inSet[next] = true
					queue = append(queue, next)
				}
			}
		}
		for id := range inSet {
			works[sessions[id].work] = true
		}
	}
	return inSet, works, nil
}

// workItems adds the work items works names, as of rev, sorted.
func workItems(conn *sqlite.Conn, rep *Report, works map[string]bool, rev int64) error {
	keys := make([]string, 0, len(works))
	for k := range works {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w := WorkItem{Key: k}
		items, err := projections.WorkItemAt(conn, k, rev)
		if err != nil {
			return err
		}
		if len(items) > 0 {
			w.Title, w.Status, w.Source = items[0].Title, items[0].Status, items[0].Source.Path
		}
		rep.Work = append(rep.Work, w)
	}

	return nil
}

// auditKinds are the kinds the report's second pass reads.
var auditKinds = map[events.Kind]bool{
	events.KindSessionStarted: true, events.KindSessionEnded: true, events.KindSessionResumed: true,
	events.KindClaimAcquired: true, events.KindClaimRenewed: true, events.KindClaimReleased: true,
	events.KindCheckpointRecorded: true, events.KindRestatementChecked: true,
	events.KindClientBound: true, events.KindHostEventRecorded: true,
	events.KindExecutionStarted: true, events.KindExecutionFinished: true,
	events.KindEvidenceRecorded: true, events.KindWorkVerified: true,
}

// movedHalf is the claim event of a resume's move seen so far.
type movedHalf struct {
	claim string
	token int64
	seq   int64
}

// auditGather accumulates the report's entries in seq order.
type auditGather struct {
	conn      *sqlite.Conn
	rep       *Report
	sessionAt map[string]int   // session id -> index in rep.Sessions
	execAt    map[string]int   // execution id -> index in rep.Executions
	tokens    map[string]int64 // claim id -> fencing token
	// moved holds, by session, the claim a move released from it
	// ("from:"+id) and the claim a move gave it ("to:"+id).
	moved map[string]movedHalf
}

func ref(e *events.Event) Ref {
	return Ref{Seq: e.Seq, Hash: hex.EncodeToString(e.Hash), At: Time(e.OccurredAt), Actor: e.Actor}
}

func (g *auditGather) add(e *events.Event, v events.Payload, inSet map[string]bool, concerns func(session, work string) bool) error {
	rep := g.rep
	switch pl := v.(type) {
	case *events.SessionStarted:
		if inSet[pl.SessionID] {
			g.sessionAt[pl.SessionID] = len(rep.Sessions)
			rep.Sessions = append(rep.Sessions, Session{Started: ref(e), ID: pl.SessionID, Work: pl.Work, Agent: pl.Agent,
				Provider: pl.Provider, Model: pl.Model, Workdir: pl.Workdir, ResumedFrom: pl.PredecessorID, Repo: auditRepo(pl.Repo)})
		}
	case *events.SessionEnded:
		if i, ok := g.sessionAt[pl.SessionID]; ok {
			rep.Sessions[i].Ended = &SessionEnd{Ref: ref(e), Outcome: pl.Outcome, Reason: pl.Reason}
		}
	case *events.ClaimAcquired:
		g.tokens[pl.ClaimID] = pl.FencingToken
		if pl.MovedFrom != "" {
			g.moved["to:"+pl.SessionID] = movedHalf{claim: pl.ClaimID, token: pl.FencingToken, seq: e.Seq}
		}
		if concerns(pl.SessionID, pl.Work) {
			c := ClaimEvent{Ref: ref(e), Event: ClaimAcquired, ClaimID: pl.ClaimID, Work: pl.Work, Session: pl.SessionID,
				Agent: pl.Agent, FencingToken: pl.FencingToken, TTLms: pl.TTLms, MovedFrom: pl.MovedFrom}
			if pl.ExpiresAt > 0 {
				c.ExpiresAt = Time(pl.ExpiresAt)
			}
			rep.Claims = append(rep.Claims, c)
		}
	case *events.ClaimRenewed:
		if concerns(pl.SessionID, pl.Work) {
			c := ClaimEvent{Ref: ref(e), Event: ClaimRenewed, ClaimID: pl.ClaimID, Work: pl.Work, Session: pl.SessionID,
				FencingToken: g.tokens[pl.ClaimID], TTLms: pl.TTLms}
			if pl.ExpiresAt > 0 {
				c.ExpiresAt = Time(pl.ExpiresAt)
			}
			rep.Claims = append(rep.Claims, c)
		}
	case *events.ClaimReleased:
		if pl.Reason == events.ReleaseMoved {
			g.moved["from:"+pl.SessionID] = movedHalf{claim: pl.ClaimID, token: g.tokens[pl.ClaimID], seq: e.Seq}
		}
		if concerns(pl.SessionID, pl.Work) {
			rep.Claims = append(rep.Claims, ClaimEvent{Ref: ref(e), Event: ClaimReleased, ClaimID: pl.ClaimID, Work: pl.Work,
				Session: pl.SessionID, FencingToken: g.tokens[pl.ClaimID], Reason: pl.Reason, ToSession: pl.ToSession, Note: pl.Note})
		}
	case *events.CheckpointRecorded:
		if concerns(pl.SessionID, pl.Work) {
			return g.checkpoint(e, pl)
		}
	case *events.SessionResumed:
		if concerns(pl.SessionID, pl.Work) {
			return g.resumed(e, pl)
		}
	case *events.RestatementChecked:
		if !concerns(pl.SessionID, pl.Work) {
			return nil
		}
		rs := Restatement{Ref: ref(e), Session: pl.SessionID, Work: pl.Work, CheckpointID: pl.CheckpointID, Verdict: pl.Verdict, Items: []RestatementField{}}
		for _, it := range pl.Items {
			rs.Items = append(rs.Items, RestatementField{Field: it.Field, Status: it.Status, Expected: it.Expected, Stated: it.Stated})
		}
		rep.Restatements = append(rep.Restatements, rs)
	case *events.ClientBound:
		if concerns(pl.SessionID, pl.Work) {
			rep.Bindings = append(rep.Bindings, Binding{Ref: ref(e), Client: pl.Client, ExternalSession: pl.ExternalSession,
				Session: pl.SessionID, Work: pl.Work, CheckpointID: pl.CheckpointID, ContinuesFrom: pl.ContinuesFrom})
		}
	case *events.HostEventRecorded:
		if concerns(pl.SessionID, pl.Work) {
			rep.HostEvents = append(rep.HostEvents, hostEvent(e, pl))
		}
	case *events.ExecutionStarted:
		if concerns(pl.SessionID, pl.Work) {
			g.execAt[pl.ExecutionID] = len(rep.Executions)
			rep.Executions = append(rep.Executions, Execution{Started: ref(e), ID: pl.ExecutionID, Work: pl.Work, Session: pl.SessionID,
				Key: pl.Key, Purpose: pl.Purpose, Argv: pl.Argv, Cwd: pl.Cwd, ClaimID: pl.ClaimID, FencingToken: pl.FencingToken,
				Retries: pl.Retries, Repo: auditExecRepo(pl.Repo)})
		}
	case *events.ExecutionFinished:
		if i, ok := g.execAt[pl.ExecutionID]; ok {
			rep.Executions[i].Finished = &ExecFinished{Ref: ref(e), ExitCode: pl.ExitCode, Signal: pl.Signal, Error: pl.Error,
				DurationMs: pl.DurationMs, StdoutSHA256: pl.Stdout.SHA256, StdoutBytes: pl.Stdout.Bytes,
				StderrSHA256: pl.Stderr.SHA256, StderrBytes: pl.Stderr.Bytes, RepoAfter: auditExecRepo(pl.RepoAfter)}
		}
	case *events.EvidenceRecorded:
		if concerns(pl.SessionID, pl.Work) {
			rep.Evidence = append(rep.Evidence, evidence(e, pl))
		}
	case *events.WorkVerified:
		if concerns(pl.SessionID, pl.Work) {
			wv := Verification{Ref: ref(e), Work: pl.Work, Session: pl.SessionID, Level: pl.Level, Criteria: []Criterion{}, Repo: auditSeatRepo(pl.Repo)}
			for _, c := range pl.Criteria {
				wv.Criteria = append(wv.Criteria, Criterion{Criterion: c.Criterion, EvidenceID: c.EvidenceID, Level: c.Level})
			}
			rep.Verifications = append(rep.Verifications, wv)
		}
	}
	return nil
}

// checkpoint adds a checkpoint of the subject, with the knowledge in
// force once it was recorded.
func (g *auditGather) checkpoint(e *events.Event, pl *events.CheckpointRecorded) error {
	cp := Checkpoint{Ref: ref(e), ID: pl.CheckpointID, Session: pl.SessionID, Work: pl.Work, Agent: pl.Agent,
		Digest: pl.Digest, NextAction: pl.NextAction, ContextHash: pl.ContextHash, ContextHashVerified: pl.ContextHashVerified,
		ContextHashNote: pl.ContextHashNote, OpenLoopTexts: pl.OpenLoops, Changes: []Change{}, Repo: auditRepo(pl.Repo)}
	opened := map[string]bool{}
	for _, c := range pl.Changes {
		cp.Changes = append(cp.Changes, Change(c))
		if c.Op == events.ChangeOpen {
			opened[c.ID] = true
		}
	}
	kept, err := g.inForce(pl.Work, e.Seq, opened)
	if err != nil {
		return err
	}
	cp.Kept = kept
	g.rep.Checkpoints = append(g.rep.Checkpoints, cp)
	return nil
}

// resumed adds a resume of the subject: who resumed, whether the claim
// moved with it, and the knowledge carried.
func (g *auditGather) resumed(e *events.Event, pl *events.SessionResumed) error {
	r := Resume{Ref: ref(e), Session: pl.SessionID, FromSession: pl.FromSession, Work: pl.Work,
		CheckpointID: pl.CheckpointID, ExternalSession: pl.ExternalSession}
	if i, ok := g.sessionAt[pl.SessionID]; ok {
		r.Agent = g.rep.Sessions[i].Agent
	}
	to, okTo := g.moved["to:"+pl.SessionID]
	from, okFrom := g.moved["from:"+pl.FromSession]
	if okTo && okFrom {
		r.ClaimMoved = &MovedClaim{FromClaim: from.claim, ToClaim: to.claim, FencingToken: to.token, ReleasedSeq: from.seq, AcquiredSeq: to.seq}
	}
	if i, ok := g.sessionAt[pl.FromSession]; ok {
		if end := g.rep.Sessions[i].Ended; end != nil && end.Reason == "resumed by "+pl.SessionID {
			r.PredecessorEnded = end.Outcome
		}
	}
	carried, err := g.inForce(pl.Work, e.Seq, nil)
	if err != nil {
		return err
	}
	r.Carried = carried
	g.rep.Resumes = append(g.rep.Resumes, r)
	return nil
}

// evidence is one evidence record as the report shows it.
func evidence(e *events.Event, pl *events.EvidenceRecorded) Evidence {
	ev := Evidence{Ref: ref(e), ID: pl.EvidenceID, Work: pl.Work, Criterion: pl.Criterion, Basis: pl.Basis,
		Level: pl.Level, Passed: pl.Passed, Session: pl.SessionID, Repo: auditSeatRepo(pl.Repo)}
	switch pl.Basis {
	case events.EvidenceCommand:
		ev.Detail = pl.Command
		if pl.ExitCode != nil {
			ev.Detail += " (exit " + strconv.Itoa(*pl.ExitCode) + ")"
		}
	case events.EvidenceFile:
		ev.Detail = strings.TrimSpace(pl.Path + " " + pl.FileHash)
	default:
		ev.Detail = pl.Note
	}
	return ev
}

// hostEvent is one host event as the report shows it.
func hostEvent(e *events.Event, pl *events.HostEventRecorded) HostEvent {
	var detail []string
	for _, d := range []struct{ k, v string }{{"source", pl.Source}, {"trigger", pl.Trigger}, {"reason", pl.Reason}} {
		if d.v != "" {
			detail = append(detail, d.k+" "+d.v)
		}
	}
	return HostEvent{Ref: ref(e), Client: pl.Client, ExternalSession: pl.ExternalSession,
		Session: pl.SessionID, Event: pl.Event, HostEvent: pl.HostEvent, Detail: strings.Join(detail, ", "), Answer: pl.Answer, ContextHash: pl.ContextHash}
}

// inForce is the knowledge of work in force right after event seq, less
// the items in skip. It reads the items live at seq (their index), not
// every item the work item ever had with its sessions counted: the
// audit asks at each checkpoint and resume, and a long-lived item has
// thousands of closed ones.
func (g *auditGather) inForce(work string, seq int64, skip map[string]bool) (Knowledge, error) {
	live, err := projections.LiveKnowledgeAt(g.conn, work, seq)
	if err != nil {
		return Knowledge{}, err
	}
	st := projections.SortKnowledge(live, seq)
	items := func(ks []projections.Knowledge) []Item {
		out := []Item{}
		for _, it := range ks {
			if !skip[it.ID] {
				out = append(out, Item{ID: it.ID, Text: it.Text})
			}
		}
		return out
	}
	return Knowledge{OpenLoops: items(st.OpenLoops), Decisions: items(st.Decisions), Facts: items(st.Facts), Hypotheses: items(st.Hypotheses)}, nil
}

func auditRepo(r *events.RepoRecord) *Repo {
	if r == nil {
		return nil
	}
	out := &Repo{Unverifiable: r.Unverifiable, FilesChanged: auditFiles(r.FilesChanged), FilesSince: r.FilesSince, FilesTruncated: r.FilesTruncated}
	if s := r.State; s != nil {
		out.Head, out.Branch, out.Dirty, out.DirtyFingerprint = s.Head, s.Branch, s.Dirty, s.DirtyFingerprint
		out.DirtyFiles, out.DirtyTruncated = auditFiles(s.DirtyFiles), s.DirtyTruncated
	}
	return out
}

func auditFiles(fs []repo.File) []File {
	if len(fs) == 0 {
		return nil
	}
	out := make([]File, len(fs))
	for i, f := range fs {
		out[i] = File{Path: f.Path, Status: f.Status, From: f.From}
	}
	return out
}

func auditExecRepo(r *events.ExecutionRepo) *Repo {
	if r == nil {
		return nil
	}
	return &Repo{Head: r.Head, Branch: r.Branch, Dirty: r.Dirty, DirtyFingerprint: r.DirtyFingerprint, Unverifiable: r.Unverifiable}
}

func auditSeatRepo(r *events.SeatRepo) *Repo {
	if r == nil {
		return nil
	}
	return &Repo{Head: r.Head, Dirty: r.Dirty, DirtyFingerprint: r.DirtyFingerprint}
}
