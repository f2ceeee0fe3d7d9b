package events

import (
	"fmt"
	"strings"
	"time"
)

// FutureTolerance is how far after the checking machine's clock an
// event's time may lie: clocks drift and jump (a machine whose clock ran
// fast stamps its events ahead, and every later event is stamped at
// least that late, since time never runs backwards in seq), a forged date
// (year 3000) is far beyond a day.
const FutureTolerance = 24 * time.Hour

// Invariants folds a log in seq order and names the first event that
// breaks a rule the log itself must keep, beyond its hash chain (which a
// forger who re-hashes every event can keep intact):
//
//   - time: never before 1970, never more than FutureTolerance after the
//     checking machine's clock, never earlier than the previous event's;
//   - streams: each stream's versions run 1, 2, 3…, and every event sits
//     on the stream its payload names;
//   - sessions: a session stream starts with session_started; a session
//     starts on a work item some source declares (or continues a session
//     that started); nothing is compiled, checkpointed or ended on a
//     session after it ended; an event names its session's own work item;
//   - claims: a claim is acquired by a started, unended session on its own
//     work item, which a source declares (unless the claim moves from a
//     predecessor); fencing tokens of a work item strictly increase; a
//     work item never has two live claims (a claim is live from its
//     acquisition until it is released or its lease runs out); a renewal
//     or release names a claim that was acquired and not released, and a
//     renewal names the work item's latest claim;
//   - executions: an execution is started by a started, unended session
//     on its own work item that holds the item's latest claim; a key's
//     later execution names the latest one it retries, which never
//     finished or failed (a key that succeeded runs no more); a finish
//     names an execution started on the same stream, by the same
//     session, that has not finished;
//   - forks: a project_forked forks the project the log is, at its head,
//     under an id of its own (Lineage): a fork of a project's own id is
//     refused.
//
// Verify, import and every rebuild of the projections run it, so a forged
// log is refused wherever it is read in full. The zero value is not
// ready: use NewInvariants.
type Invariants struct {
	now     int64 // the latest acceptable occurred_at
	prevAt  int64
	prevSeq int64
	// versions holds every stream's version but the sessions' (a
	// session's stream version lives in its sessionFold).
	versions map[string]int64
	keys     map[string]map[ItemRef]bool // source path → the declarations it holds
	declared map[string]int              // work key → how many sources declare it
	// The sessions, claims and executions ever seen, which a whole log
	// holds in proportion to its length: each kept as a small value
	// without pointers in a slice, found by id through an idIndex, its
	// work item and stream as numbers (names).
	sessionIDs idIndex
	sessions   []sessionFold
	claimIDs   idIndex
	claims     []claimFold
	execIDs    idIndex
	execs      []execFold
	names      names
	latest     map[string]string // work key → its latest claim
	maxToken   map[string]int64
	keyLast    map[string]string // execution stream → its latest execution
	lineage    Lineage
}

type execFold struct {
	stream   int32 // in names
	session  int32 // index in sessions
	finished bool
	exit     int64
}

type sessionFold struct {
	work    int32 // in names
	pred    int32 // index+1 in sessions of the session it continues, 0 for a first session
	version int64 // its stream's version
	endedAt int64 // the seq of its session_ended; 0 while it runs
}

type claimFold struct {
	work     int32 // in names
	session  int32 // index in sessions
	released bool
	expires  int64
}

// NewInvariants returns a fold for a log read at now (the machine's
// clock; events more than FutureTolerance after it are refused).
func NewInvariants(now time.Time) *Invariants {
	return &Invariants{
		now:        now.Add(FutureTolerance).UnixMilli(),
		versions:   map[string]int64{},
		keys:       map[string]map[ItemRef]bool{},
		declared:   map[string]int{},
		sessionIDs: newIDIndex(),
		claimIDs:   newIDIndex(),
		execIDs:    newIDIndex(),
		names:      names{index: map[string]int32{}},
		latest:     map[string]string{},
		maxToken:   map[string]int64{},
		keyLast:    map[string]string{},
	}
}

// session returns the fold of the session id, nil when it never started.
func (c *Invariants) session(id string) *sessionFold {
	if i, ok := c.sessionIDs.find(id); ok {
		return &c.sessions[i]
	}
	return nil
}

// claim returns the fold of the claim id, nil when it was never acquired.
func (c *Invariants) claim(id string) *claimFold {
	if i, ok := c.claimIDs.find(id); ok {
		return &c.claims[i]
	}
	return nil
}

// exec returns the fold of the execution id, nil when it never started.
func (c *Invariants) exec(id string) *execFold {
	if i, ok := c.execIDs.find(id); ok {
		return &c.execs[i]
	}
	return nil
}

// Check folds e, whose decoded payload is v, and returns the rule it
// breaks ("" when none). Events must come in seq order, after their hash
// chain was checked.
func (c *Invariants) Check(e *Event, v Payload) string {
	if problem := c.envelope(e); problem != "" {
		return problem
	}
	if problem := c.stream(e, v); problem != "" {
		return "domain: " + problem
	}
	if problem := c.domain(e, v); problem != "" {
		return "domain: " + problem
	}
	return ""
}

func (c *Invariants) envelope(e *Event) string {
	switch {
	case e.OccurredAt < 0:
		return fmt.Sprintf("time before 1970: occurred_at %d", e.OccurredAt)
	case e.OccurredAt > c.now:
		return fmt.Sprintf("time lies in the future: occurred_at %d (%s) is more than %s after this machine's clock", e.OccurredAt,
			time.UnixMilli(e.OccurredAt).UTC().Format(time.RFC3339), FutureTolerance)
	case c.prevSeq > 0 && e.OccurredAt < c.prevAt:
		return fmt.Sprintf("time runs backwards: occurred_at %d is earlier than seq %d's %d", e.OccurredAt, c.prevSeq, c.prevAt)
	}
	c.prevAt, c.prevSeq = e.OccurredAt, e.Seq
	if id, ok := strings.CutPrefix(e.Stream, "session/"); ok {
		if s := c.session(id); s != nil {
			if e.StreamVersion != s.version+1 {
				return fmt.Sprintf("stream %s version %d does not follow %d", e.Stream, e.StreamVersion, s.version)
			}
			s.version = e.StreamVersion
			return ""
		}
	}
	// Every other stream, and a session's before its session_started
	// (version 1), which sessionStarted then takes over.
	if want := c.versions[e.Stream] + 1; e.StreamVersion != want {
		return fmt.Sprintf("stream %s version %d does not follow %d", e.Stream, e.StreamVersion, want-1)
	}
	c.versions[e.Stream] = e.StreamVersion
	return ""
}

// stream checks that e sits on the stream its payload names.
func (c *Invariants) stream(e *Event, v Payload) string {
	want := ""
	switch pl := v.(type) {
	case *ProjectInitialized:
		want = "project"
	case *ProjectForked:
		want = "project"
	case *SourceIndexed:
		want = "source/" + pl.Path
	case *SessionStarted:
		want = "session/" + pl.SessionID
	case *SessionResumed:
		want = "session/" + pl.SessionID
	case *ContextCompiled:
		want = "session/" + pl.SessionID
	case *CheckpointRecorded:
		want = "session/" + pl.SessionID
	case *SessionEnded:
		want = "session/" + pl.SessionID
	case *RestatementChecked:
		want = "session/" + pl.SessionID
	case *ClientBound:
		want = "client/" + pl.ExternalSession
	case *HostEventRecorded:
		want = "client/" + pl.ExternalSession
	case *ClaimAcquired:
		want = "work/" + pl.Work
	case *ClaimRenewed:
		want = "work/" + pl.Work
	case *ClaimReleased:
		want = "work/" + pl.Work
	case *SeatMessageSent:
		want = "seat/" + pl.Address
	case *SeatReconciled:
		want = "seat/" + pl.Address
	case *EvidenceRecorded:
		want = "evidence/" + pl.Work
	case *WorkVerified:
		want = "evidence/" + pl.Work
	case *ExecutionStarted:
		want = ExecutionStream(pl.Work, pl.Key)
	case *ExecutionFinished:
		want = ExecutionStream(pl.Work, pl.Key)
	case *KnowledgeConfirmed:
		want = KnowledgeStream(pl.Work)
	}
	if want != "" && e.Stream != want {
		return fmt.Sprintf("a %s on stream %s, where its payload names %s", e.Kind, e.Stream, want)
	}
	if strings.HasPrefix(e.Stream, "session/") && e.StreamVersion == 1 && e.Kind != KindSessionStarted {
		return fmt.Sprintf("a %s on %s, which never started", e.Kind, e.Stream)
	}
	return ""
}

func (c *Invariants) domain(e *Event, v Payload) string {
	switch pl := v.(type) {
	case *ProjectInitialized, *ProjectForked:
		return c.lineage.Fold(e, pl)
	case *SourceIndexed:
		return c.sourceIndexed(pl)
	case *SessionStarted:
		return c.sessionStarted(e, pl)
	case *SeatReconciled:
		return c.reconciled(pl)
	case *EvidenceRecorded:
		if pl.SessionID != "" {
			return c.onSession(e, pl.SessionID, pl.Work, false)
		}
	case *WorkVerified:
		return c.onSession(e, pl.SessionID, pl.Work, true)
	case *SessionResumed:
		return c.onSession(e, pl.SessionID, pl.Work, false)
	case *RestatementChecked:
		return c.onSession(e, pl.SessionID, pl.Work, false)
	case *ContextCompiled:
		return c.onSession(e, pl.SessionID, pl.Work, true)
	case *CheckpointRecorded:
		return c.onSession(e, pl.SessionID, pl.Work, true)
	case *SessionEnded:
		if problem := c.onSession(e, pl.SessionID, pl.Work, true); problem != "" {
			return problem
		}
		c.session(pl.SessionID).endedAt = e.Seq
	case *ClaimAcquired:
		return c.acquire(e, pl)
	case *ClaimRenewed:
		return c.renewed(pl)
	case *ClaimReleased:
		return c.released(pl)
	case *ExecutionStarted:
		return c.execStarted(e, pl)
	case *ExecutionFinished:
		return c.execFinished(e, pl)
	}
	return ""
}

// sourceIndexed folds the work items a source declares: a whole index
// replaces the source's items, a delta adds to them and drops what it
// names, a removal drops them all.
func (c *Invariants) sourceIndexed(pl *SourceIndexed) string {
	if problem := pl.shape(); problem != "" {
		return fmt.Sprintf("a source_indexed of %s %s", pl.Path, problem)
	}
	held := c.keys[pl.Path]
	undeclare := func(ref ItemRef) {
		if !held[ref] {
			return
		}
		delete(held, ref)
		if c.declared[ref.Key]--; c.declared[ref.Key] == 0 {
			delete(c.declared, ref.Key)
		}
	}
	if !pl.Delta || pl.Removed {
		for ref := range held {
			undeclare(ref)
		}
	} else if pl.Dropped != nil {
		for _, ref := range pl.Dropped.Items {
			undeclare(ref)
		}
	}
	if pl.Removed {
		delete(c.keys, pl.Path)
		return ""
	}
	if held == nil {
		held = map[ItemRef]bool{}
		c.keys[pl.Path] = held
	}
	repeats := map[string]int{}
	for i, it := range pl.Items {
		ref := ItemRef{Key: it.Key, Repeat: repeats[it.Key]}
		if pl.Delta {
			ref.Repeat = pl.ItemRepeat(i)
		}
		repeats[it.Key]++
		if !held[ref] {
			held[ref] = true
			c.declared[it.Key]++
		}
	}
	return ""
}

// sessionStarted checks a session's start: once, on a declared work item
// or after a session that started.
func (c *Invariants) sessionStarted(e *Event, pl *SessionStarted) string {
	if e.StreamVersion != 1 {
		return fmt.Sprintf("session %s is started a second time", pl.SessionID)
	}
	if pl.PredecessorID != "" {
		if c.session(pl.PredecessorID) == nil {
			return fmt.Sprintf("session %s continues session %s, which never started", pl.SessionID, pl.PredecessorID)
		}
	} else if c.declared[pl.Work] == 0 {
		return fmt.Sprintf("session %s starts on work item %s, which no source declares", pl.SessionID, pl.Work)
	}
	var pred int32
	if pl.PredecessorID != "" {
		i, _ := c.sessionIDs.find(pl.PredecessorID)
		pred = i + 1
	}
	// The stream's version moves from versions into the session's fold.
	c.sessionIDs.add(pl.SessionID, int32(len(c.sessions)))
	c.sessions = append(c.sessions, sessionFold{work: c.names.of(pl.Work), pred: pred, version: e.StreamVersion})
	delete(c.versions, e.Stream)
	return ""
}

// renewed checks a renewal: of the live claim that was acquired there.
func (c *Invariants) renewed(pl *ClaimRenewed) string {
	cl := c.claim(pl.ClaimID)
	switch {
	case cl == nil || c.names.name(cl.work) != pl.Work:
		return fmt.Sprintf("claim %s on %s is renewed but was never acquired there", pl.ClaimID, pl.Work)
	case cl.released:
		return fmt.Sprintf("claim %s on %s is renewed after it was released", pl.ClaimID, pl.Work)
	case c.latest[pl.Work] != pl.ClaimID:
		return fmt.Sprintf("claim %s on %s is renewed after claim %s superseded it", pl.ClaimID, pl.Work, c.latest[pl.Work])
	}
	cl.expires = pl.ExpiresAt
	return ""
}

// released checks a release: once, by the session that holds the claim.
func (c *Invariants) released(pl *ClaimReleased) string {
	cl := c.claim(pl.ClaimID)
	switch {
	case cl == nil || c.names.name(cl.work) != pl.Work:
		return fmt.Sprintf("claim %s on %s is released but was never acquired there", pl.ClaimID, pl.Work)
	case cl.released:
		return fmt.Sprintf("claim %s on %s is released twice", pl.ClaimID, pl.Work)
	case !c.sessionIs(cl.session, pl.SessionID):
		return fmt.Sprintf("claim %s on %s is released by session %s, but session %s holds it", pl.ClaimID, pl.Work, pl.SessionID, c.sessionIDs.id(cl.session))
	}
	cl.released = true
	return ""
}

// execFinished checks an execution's end: once, on its stream, by the
// session that started it.
func (c *Invariants) execFinished(e *Event, pl *ExecutionFinished) string {
	x := c.exec(pl.ExecutionID)
	switch {
	case x == nil || c.names.name(x.stream) != e.Stream:
		return fmt.Sprintf("execution %s finishes on %s, where it never started", pl.ExecutionID, e.Stream)
	case x.finished:
		return fmt.Sprintf("execution %s finishes twice", pl.ExecutionID)
	case !c.sessionIs(x.session, pl.SessionID):
		return fmt.Sprintf("execution %s is finished by session %s, but session %s started it", pl.ExecutionID, pl.SessionID, c.sessionIDs.id(x.session))
	}
	x.finished, x.exit = true, int64(pl.ExitCode)
	return ""
}

// execStarted checks a new execution: who runs it, and that its key may
// run again.
func (c *Invariants) execStarted(e *Event, pl *ExecutionStarted) string {
	if c.exec(pl.ExecutionID) != nil {
		return fmt.Sprintf("execution %s is started a second time", pl.ExecutionID)
	}
	if problem := c.onSession(e, pl.SessionID, pl.Work, true); problem != "" {
		return problem
	}
	if cl := c.claim(c.latest[pl.Work]); cl == nil || cl.released || !c.sessionIs(cl.session, pl.SessionID) {
		return fmt.Sprintf("execution %s of %s is started by session %s, which does not hold the claim on %s", pl.ExecutionID, pl.Key, pl.SessionID, pl.Work)
	}
	last := c.keyLast[e.Stream]
	switch prev := c.exec(last); {
	case prev == nil && pl.Retries != "":
		return fmt.Sprintf("execution %s retries %s, which is not an execution of %s on %s", pl.ExecutionID, pl.Retries, pl.Key, pl.Work)
	case prev == nil:
	case pl.Retries != last:
		return fmt.Sprintf("execution %s runs %s on %s again without retrying its latest execution %s", pl.ExecutionID, pl.Key, pl.Work, last)
	case prev.finished && prev.exit == 0:
		return fmt.Sprintf("execution %s runs %s on %s again after execution %s succeeded", pl.ExecutionID, pl.Key, pl.Work, last)
	}
	session, _ := c.sessionIDs.find(pl.SessionID)
	c.execIDs.add(pl.ExecutionID, int32(len(c.execs)))
	c.execs = append(c.execs, execFold{stream: c.names.of(e.Stream), session: session})
	c.keyLast[e.Stream] = pl.ExecutionID
	return ""
}

// reconciled checks an adoption: the adopted session continues the seat's
// session (through any number of resumes), and it is recorded as running
// exactly when it has not ended.
func (c *Invariants) reconciled(pl *SeatReconciled) string {
	s := c.session(pl.SessionID)
	from, ok := c.sessionIDs.find(pl.FromSession)
	if s == nil || !ok {
		return fmt.Sprintf("seat %s adopts session %s from session %s, which never started", pl.Address, pl.SessionID, pl.FromSession)
	}
	if (s.endedAt == 0) != pl.SessionActive {
		return fmt.Sprintf("seat %s adopts session %s as running=%t, but it ended at seq %d", pl.Address, pl.SessionID, pl.SessionActive, s.endedAt)
	}
	for pred, n := s.pred, 0; ; pred, n = c.sessions[pred-1].pred, n+1 {
		switch {
		case pred == from+1:
			return ""
		case pred == 0 || n > len(c.sessions):
			return fmt.Sprintf("seat %s adopts session %s, which does not continue its session %s", pl.Address, pl.SessionID, pl.FromSession)
		}
	}
}

// onSession checks an event on a started session: that it names the
// session's own work item and, when running is set, that the session has
// not ended.
func (c *Invariants) onSession(e *Event, session, work string, running bool) string {
	s := c.session(session)
	switch {
	case s == nil:
		return fmt.Sprintf("a %s on session %s, which never started", e.Kind, session)
	case work != "" && work != c.names.name(s.work):
		return fmt.Sprintf("a %s names work item %s, but session %s works on %s", e.Kind, work, session, c.names.name(s.work))
	case running && s.endedAt != 0:
		return fmt.Sprintf("a %s on session %s, which ended at seq %d", e.Kind, session, s.endedAt)
	}
	return ""
}

func (c *Invariants) acquire(e *Event, pl *ClaimAcquired) string {
	s := c.session(pl.SessionID)
	switch {
	case pl.MovedFrom == "" && c.declared[pl.Work] == 0:
		return fmt.Sprintf("claim %s is acquired on work item %s, which no source declares", pl.ClaimID, pl.Work)
	case s == nil:
		return fmt.Sprintf("claim %s on %s is acquired by session %s, which never started", pl.ClaimID, pl.Work, pl.SessionID)
	case c.names.name(s.work) != pl.Work:
		return fmt.Sprintf("claim %s on %s is acquired by session %s, which works on %s", pl.ClaimID, pl.Work, pl.SessionID, c.names.name(s.work))
	case s.endedAt != 0:
		return fmt.Sprintf("claim %s on %s is acquired by session %s, which ended at seq %d", pl.ClaimID, pl.Work, pl.SessionID, s.endedAt)
	case pl.FencingToken <= c.maxToken[pl.Work]:
		return fmt.Sprintf("claim %s on %s has fencing token %d, not above the %d already issued", pl.ClaimID, pl.Work, pl.FencingToken, c.maxToken[pl.Work])
	}
	// Tokens increase and a claim needs the previous one dead, so only
	// the latest claim of a work item can still be live.
	if prev := c.claim(c.latest[pl.Work]); prev != nil && !prev.released && (prev.expires == 0 || e.OccurredAt < prev.expires) {
		return fmt.Sprintf("claim %s on %s is acquired while claim %s still holds it", pl.ClaimID, pl.Work, c.latest[pl.Work])
	}
	c.maxToken[pl.Work] = pl.FencingToken
	c.latest[pl.Work] = pl.ClaimID
	session, _ := c.sessionIDs.find(pl.SessionID)
	c.claimIDs.add(pl.ClaimID, int32(len(c.claims)))
	c.claims = append(c.claims, claimFold{work: s.work, session: session, expires: pl.ExpiresAt})
	return ""
}

// sessionIs reports whether the session at index i in sessions is id.
func (c *Invariants) sessionIs(i int32, id string) bool {
	j, ok := c.sessionIDs.find(id)
	return ok && i == j
}
