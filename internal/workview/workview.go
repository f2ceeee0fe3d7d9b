// Package workview assembles `awr work show`: what the log says of one
// work item at a revision (the item as indexed and where it comes from,
// whether it is ready and executable, its sessions and live claim, its
// progress and knowledge, its evidence and latest verification), read from
// the projections and commands' evidence, and its completion judged
// against what the door observed of the repository.
package workview

import (
	"cmp"
	"slices"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// Provenance is where a work item comes from: its source and lines,
// that source's content hash and the index that read it, and the seq at
// which the item last changed.
type Provenance struct {
	Source      string `json:"source"`
	LineStart   int    `json:"line_start"`
	LineEnd     int    `json:"line_end"`
	ContentHash string `json:"content_hash"`
	IndexedSeq  int64  `json:"indexed_seq"`
	ChangedSeq  int64  `json:"changed_seq"`
}

// EvidenceView is one piece of evidence with the seq that recorded it.
type EvidenceView struct {
	events.EvidenceRecorded
	Seq int64 `json:"seq"`
}

// Result is `awr work show`: the item as indexed, where it comes
// from, whether it can be claimed and executed, its progress (the
// register's next action beside the latest checkpoint's), its claim and
// sessions, its live knowledge, its evidence and its completion.
type Result struct {
	Work          events.WorkItem              `json:"work"`
	Provenance    Provenance                   `json:"provenance"`
	Ready         bool                         `json:"ready"`
	NotReady      []projections.NotReadyReason `json:"not_ready"`
	Executable    bool                         `json:"executable"`
	NotExecutable []intake.Why                 `json:"not_executable"`
	Progress      workcontext.NextAction       `json:"progress"`
	Claim         *projections.Claim           `json:"claim"`
	Current       string                       `json:"current_session,omitempty"`
	// Sessions are the item's latest sessions (at most
	// commands.DefaultPage), oldest first, of SessionsTotal in all; when
	// older ones exist, SessionsNextCursor is the --cursor of `awr
	// session list --work KEY --newest` that lists them (set by the door,
	// whose cursors those are).
	Sessions           []projections.Session `json:"sessions"`
	SessionsTotal      int                   `json:"sessions_total"`
	SessionsNextCursor string                `json:"sessions_next_cursor,omitempty"`
	// Knowledge is the item's knowledge: a page of the items in force
	// (Page; its open loops, then decisions, facts and hypotheses, each
	// by number), KnowledgeTotal counting every one and, when more
	// follow, KnowledgeNextCursor the --knowledge-cursor of the next
	// page; and the latest items closed since the checkpoint.
	Knowledge           *projections.KnowledgeState `json:"knowledge"`
	KnowledgeTotal      int                         `json:"knowledge_total"`
	KnowledgeNextCursor string                      `json:"knowledge_next_cursor,omitempty"`
	Checkpoint          *projections.Checkpoint     `json:"latest_checkpoint"`
	// Evidence is a page of the item's evidence, oldest first: the
	// latest (Page.Limit) recorded before Page.EvidenceBefore (by rev
	// when 0), of EvidenceTotal in all; when older pieces exist,
	// EvidenceNextCursor is the --evidence-cursor that lists them. The
	// completion is judged on every piece.
	Evidence           []EvidenceView      `json:"evidence"`
	EvidenceTotal      int                 `json:"evidence_total"`
	EvidenceNextCursor string              `json:"evidence_next_cursor,omitempty"`
	Completion         commands.Completion `json:"completion"`
	Duplicates         int                 `json:"duplicates,omitempty"`
	ProjectRevision    int64               `json:"project_revision"`

	current *projections.Session
	// evidence is every piece of evidence, oldest first: what the
	// completion is judged on.
	evidence []EvidenceView
}

// Page selects the pages a result holds: the items in force after
// KnowledgeAfter (nil: from the first) and the latest pieces of evidence
// recorded before seq EvidenceBefore (0: by the revision read), at most
// Limit of each (0: every one).
type Page struct {
	KnowledgeAfter *projections.KnowledgePlace
	EvidenceBefore int64
	Limit          int
}

// At assembles `awr work show KEY` at rev for a reader at now (head:
// rev is the head): the item, then each part read in its own step, its
// knowledge in force the page pg selects. Its completion is judged
// apart (Judge), against what the caller observes.
// Errors: NotFound for an item unknown at rev; Storage.
func At(conn *sqlite.Conn, key string, rev, now int64, head bool, pg Page) (*Result, error) {
	items, err := projections.WorkItemAt(conn, key, rev)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fault.New(fault.NotFound, "work show: work item %q not found at revision %d", key, rev).With("work", key).WithHint("awr ready --all")
	}
	it := items[0]
	res := &Result{Work: it.WorkItem, Duplicates: len(items) - 1, ProjectRevision: rev, NotReady: []projections.NotReadyReason{},
		NotExecutable: []intake.Why{}, Sessions: []projections.Session{}, Evidence: []EvidenceView{}}
	for _, step := range []func() error{
		func() error { return res.readProvenance(conn, it, rev, head) },
		func() error { return res.readReadiness(conn, it, rev, now, head) },
		func() error { return res.readSessions(conn, rev, now, head) },
		func() error { return res.readProgress(conn, it, rev, pg) },
		func() error { return res.readEvidence(conn, rev, pg) },
	} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// readProvenance: where the item comes from, the source's content hash, when
// it was indexed and when the item last changed in it.
func (res *Result) readProvenance(conn *sqlite.Conn, it projections.WorkItem, rev int64, head bool) error {
	res.Provenance = Provenance{Source: it.Source.Path, LineStart: it.Source.LineStart, LineEnd: it.Source.LineEnd}
	srcs, err := projections.SourcesAt(conn, rev, head)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		if s.Path == it.SourcePath {
			res.Provenance.ContentHash, res.Provenance.IndexedSeq = s.ContentHash, s.Revision
		}
	}
	versions, err := projections.ItemVersionsSince(conn, it.Key, 0, rev)
	if err != nil {
		return err
	}
	for _, v := range versions {
		if v.SourcePath == it.SourcePath {
			res.Provenance.ChangedSeq = v.From
		}
	}
	return nil
}

// readReadiness: whether the item is ready, and whether an agent can start
// on it.
func (res *Result) readReadiness(conn *sqlite.Conn, it projections.WorkItem, rev, now int64, head bool) error {
	rd, ok, err := projections.ReadinessOf(conn, it.Key, rev, now, head)
	if err != nil {
		return err
	}
	if ok {
		res.Ready = rd.Ready
		if rd.Reasons != nil {
			res.NotReady = rd.Reasons
		}
	}
	goals := map[string]bool{}
	gs, err := projections.GoalsAt(conn, rev)
	if err != nil {
		return err
	}
	for _, g := range gs {
		goals[g.Key] = true
	}
	if why := intake.Unexecutable(it, goals); len(why) > 0 {
		res.NotExecutable = why
	} else {
		res.Executable = true
	}
	return nil
}

// readSessions: the item's latest sessions and how many it has, its live
// claim, and the current session (the claim's holder, else the first
// active one to have started). It reads one page of sessions and the
// active ones, never every session of a long-lived item.
func (res *Result) readSessions(conn *sqlite.Conn, rev, now int64, head bool) error {
	key := res.Work.Key
	live, err := projections.LiveClaimAt(conn, key, rev, now, head)
	if err != nil {
		return err
	}
	err = projections.SessionsPageAt(conn, rev, projections.SessionPage{Work: key, Newest: true, Limit: commands.DefaultPage}, func(s projections.Session) error {
		res.Sessions = append(res.Sessions, s)
		return nil
	})
	if err != nil {
		return err
	}
	slices.Reverse(res.Sessions)
	if res.SessionsTotal, err = projections.SessionCountAt(conn, rev, key); err != nil {
		return err
	}
	switch {
	case live != nil:
		res.current, err = projections.SessionAt(conn, live.SessionID, rev)
	default:
		res.current, err = projections.FirstActiveSessionOfWorkAt(conn, rev, key)
	}
	if err != nil {
		return err
	}
	if res.current != nil {
		res.Current = res.current.ID
	}
	if live != nil {
		res.Claim = live
		res.Current = live.SessionID
	}
	return nil
}

// readProgress: the latest checkpoint, the next action, and the page pg
// of the knowledge in force with what closed since the checkpoint.
func (res *Result) readProgress(conn *sqlite.Conn, it projections.WorkItem, rev int64, pg Page) error {
	cps, err := projections.LatestCheckpointsOfWorkAt(conn, it.Key, rev, 1)
	if err != nil {
		return err
	}
	in := workcontext.Input{Item: &it}
	if len(cps) > 0 {
		res.Checkpoint, in.Latest = &cps[0], &cps[0]
	}
	res.Progress = workcontext.NextActionOf(&in)
	since := rev
	if res.Checkpoint != nil {
		since = res.Checkpoint.Seq - 1
	}
	k, err := projections.KnowledgeStateAt(conn, it.Key, rev, since)
	if err != nil {
		return err
	}
	var last *projections.KnowledgePlace
	res.Knowledge, res.KnowledgeTotal, last = k.Listed(projections.MaxClosedListed).InForcePage(pg.KnowledgeAfter, pg.Limit)
	if last != nil {
		res.KnowledgeNextCursor = cursor.EncodeKnowledge(*last)
	}
	return nil
}

// readEvidence: the evidence recorded, oldest first (every piece, and
// the page pg selects), and the latest verification of the item.
func (res *Result) readEvidence(conn *sqlite.Conn, rev int64, pg Page) error {
	key := res.Work.Key
	evidence, seqs, err := commands.EvidenceOf(conn, key, rev)
	if err != nil {
		return err
	}
	for i := len(evidence) - 1; i >= 0; i-- {
		res.evidence = append(res.evidence, EvidenceView{EvidenceRecorded: *evidence[i], Seq: seqs[i]})
	}
	res.EvidenceTotal = len(res.evidence)
	// The page: the latest Limit before EvidenceBefore, oldest first.
	end := len(res.evidence)
	if pg.EvidenceBefore > 0 {
		end, _ = slices.BinarySearchFunc(res.evidence, pg.EvidenceBefore, func(e EvidenceView, seq int64) int { return cmp.Compare(e.Seq, seq) })
	}
	start := 0
	if pg.Limit > 0 && end > pg.Limit {
		start = end - pg.Limit
		res.EvidenceNextCursor = cursor.EncodeSeq(res.evidence[start].Seq)
	}
	res.Evidence = append(res.Evidence, res.evidence[start:end]...)
	vs, err := projections.WorkEventsAt(conn, key, events.KindWorkVerified, rev, 1)
	if err != nil || len(vs) == 0 {
		return err
	}
	v, err := events.Decode(vs[0])
	if err != nil {
		return err
	}
	if wv, ok := v.(*events.WorkVerified); ok {
		res.Completion.Verified, res.Completion.VerifiedSeq = wv, vs[0].Seq
	}
	return nil
}

// Judge fills the completion from the evidence, judged against obs (the
// repository and the evidence files as the caller found them, and the
// level the project requires).
func (r *Result) Judge(obs commands.Observed) {
	ev := make([]*events.EvidenceRecorded, len(r.evidence))
	seqs := make([]int64, len(r.evidence))
	for i := range r.evidence { // newest first
		j := len(r.evidence) - 1 - i
		ev[i], seqs[i] = &r.evidence[j].EvidenceRecorded, r.evidence[j].Seq
	}
	r.Completion.Judge(&r.Work, ev, seqs, r.Current, obs)
}

// EvidenceFiles lists the files every piece of the item's evidence with
// a file basis names, as recorded (the page of Evidence or not): what
// the completion compares with the files now.
func (r *Result) EvidenceFiles() []string {
	var files []string
	for _, e := range r.evidence {
		if e.Basis == events.EvidenceFile {
			files = append(files, e.Path)
		}
	}
	return files
}

// CurrentSession is the item's current session (the live claim's holder,
// else the first active one to have started), nil when it has none.
func (r *Result) CurrentSession() *projections.Session {
	if r.current != nil && r.current.ID == r.Current {
		return r.current
	}
	return nil
}
