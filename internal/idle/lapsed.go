package idle

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// LapsedSession is a session whose claim lapsed while it was active: its
// agent stopped renewing the claim without ending the session (it was
// killed, its machine stopped), so what it did after its last checkpoint
// may be unsaved, and nobody holds its work since. The one command that
// continues it, with its checkpoint, its loops and its work, is
// ResumeCommand: `awr session resume` for a session of its own, `awr rig
// up RIG` for a seat's. Renewing the dead agent's claim, or starting a
// session beside it, would leave that work orphaned.
type LapsedSession struct {
	ID    string `json:"id"`
	Work  string `json:"work"`
	Agent string `json:"agent"`
	// Seat is the seat whose session it is, if any.
	Seat      string `json:"seat,omitempty"`
	ClaimID   string `json:"claim_id"`
	ExpiredAt int64  `json:"expired_at"`
	// LastCheckpointSeq is the seq of its last checkpoint, its own or
	// the one it inherited (0: none).
	LastCheckpointSeq int64  `json:"last_checkpoint_seq"`
	ResumeCommand     string `json:"resume_command"`
}

// Unsaved says, in words, what may be lost.
func (l *LapsedSession) Unsaved() string {
	if l.LastCheckpointSeq == 0 {
		return "no checkpoint was ever recorded for its work, so all of it may be unsaved"
	}
	return fmt.Sprintf("what it did after its last checkpoint (seq %d) may be unsaved", l.LastCheckpointSeq)
}

// ResumeCommand is the command that continues session id.
func ResumeCommand(id string) string {
	return fmt.Sprintf(`awr session resume --from-session %s --agent "$USER"`, id)
}

// Lapsed lists the sessions active at rev whose claim had lapsed
// at now on work nobody holds, most recently lapsed first: the first
// limit of them (0: all), and how many there are. It reads the
// held claims (live or lapsed) and the active sessions once each, then
// only what a listed session shows (its checkpoint, its seat): its cost
// follows the claims nobody released, not the log, and its answer a
// page. It is ReadHeld(r, rev, head).Lapsed(r, now, limit).
func Lapsed(r *events.Reader, rev, now int64, head bool, limit int) ([]LapsedSession, int, error) {
	h, err := ReadHeld(r, rev, head)
	if err != nil {
		return nil, 0, err
	}
	return h.Lapsed(r, now, limit)
}

// Held is what Lapsed reads of one revision that no clock reading
// changes: the held claims (live or lapsed), the active sessions, and,
// once a listing needed them, each listed session's last checkpoint and
// seat. A process that reads the same revision again (a warm awr-mcp)
// keeps it and asks again at its new now (Held.Lapsed); it answers for
// its revision only, so it is kept keyed by that revision and dropped
// when the log moves. Safe for concurrent use.
type Held struct {
	rev    int64
	head   bool
	claims []projections.Claim
	mu     sync.Mutex
	active map[string]*projections.Session // nil until a claim lapsed
	shown  map[string]shown                // session id -> what a listing shows
	last   *lapsedAnswer                   // the latest answer, and the clocks it holds for
}

// lapsedAnswer is an answer of Held.Lapsed, which stays the same for
// every reader clock in [lo, hi): no held claim's lease ends inside it.
type lapsedAnswer struct {
	lo, hi, limit int64
	out           []LapsedSession
	total         int
}

// shown is what a lapsed session's listing reads of it beyond its
// claim and its session row.
type shown struct {
	checkpoint int64
	seat       string
}

// ReadHeld reads the held claims at rev (head: rev is the log's head).
// Errors: those of the projections' reads.
func ReadHeld(r *events.Reader, rev int64, head bool) (*Held, error) {
	held, err := projections.HeldClaimsAt(r.Conn, rev, head)
	if err != nil {
		return nil, err
	}
	return &Held{rev: rev, head: head, claims: held}, nil
}

// Lapsed is Lapsed at h's revision and now, reading through r (a
// snapshot of that revision) only what h does not hold yet.
func (h *Held) Lapsed(r *events.Reader, now int64, limit int) ([]LapsedSession, int, error) {
	// The work items some claim holds live at now: the work moved on.
	liveOn := map[string]bool{}
	lapsed := false
	// Which claims are live changes only where a lease ends: the answer
	// holds for every clock in [lo, hi).
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	for _, c := range h.claims {
		if c.LiveAt(now) {
			liveOn[c.Work] = true
		} else {
			lapsed = true
		}
		if c.State == projections.ClaimHeld && c.ExpiresAt != 0 {
			if now < c.ExpiresAt {
				hi = min(hi, c.ExpiresAt)
			} else {
				lo = max(lo, c.ExpiresAt)
			}
		}
	}
	if !lapsed {
		return nil, 0, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if a := h.last; a != nil && a.limit == int64(limit) && a.lo <= now && now < a.hi {
		return slices.Clone(a.out), a.total, nil
	}
	out, total, err := h.lapsed(r, now, limit, liveOn)
	if err == nil {
		h.last = &lapsedAnswer{lo: lo, hi: hi, limit: int64(limit), out: slices.Clone(out), total: total}
	}
	return out, total, err
}

// lapsed is Lapsed's answer, read; the caller holds h.mu.
func (h *Held) lapsed(r *events.Reader, now int64, limit int, liveOn map[string]bool) ([]LapsedSession, int, error) {
	if h.active == nil {
		active, err := projections.ActiveSessionsAt(r.Conn, h.rev, h.head)
		if err != nil {
			return nil, 0, err
		}
		h.active = make(map[string]*projections.Session, len(active))
		for i := range active {
			h.active[active[i].ID] = &active[i]
		}
		h.shown = map[string]shown{}
	}
	var out []LapsedSession
	seen := map[string]bool{}
	for _, c := range h.claims {
		if c.LiveAt(now) || seen[c.SessionID] {
			continue
		}
		seen[c.SessionID] = true
		s := h.active[c.SessionID]
		if s == nil || s.SuccessorID != "" || s.Work != c.Work {
			continue
		}
		if liveOn[c.Work] {
			continue // the work moved on: the session is fenced, not lapsed
		}
		out = append(out, LapsedSession{ID: s.ID, Work: s.Work, Agent: s.Agent, ClaimID: c.ID, ExpiredAt: c.ExpiresAt, ResumeCommand: ResumeCommand(s.ID)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ExpiredAt != out[j].ExpiredAt {
			return out[i].ExpiredAt > out[j].ExpiredAt
		}
		return out[i].ID < out[j].ID
	})
	total := len(out)
	if limit > 0 && total > limit {
		out = out[:limit]
	}
	for i := range out {
		l := &out[i]
		sh, ok := h.shown[l.ID]
		if !ok {
			var err error
			// Its own last checkpoint, or the one it inherited.
			if sh.checkpoint, err = chainCheckpointSeq(r, h.active[l.ID], h.rev); err != nil {
				return nil, 0, err
			}
			if sh.seat, err = projections.SeatOfSession(r.Conn, l.ID); err != nil {
				return nil, 0, err
			}
			h.shown[l.ID] = sh
		}
		l.LastCheckpointSeq, l.Seat = sh.checkpoint, sh.seat
		if _, rig, err := commands.ParseAddress(l.Seat); l.Seat != "" && err == nil {
			// A seat's session is resumed by relaunching the seat: a resume
			// by hand would leave the seat to reconcile.
			l.ResumeCommand = "awr rig up " + rig
		}
	}
	return out, total, nil
}

// chainCheckpointSeq is the seq of the latest checkpoint of s's chain as
// of rev (projections.ChainCheckpointAt's, without decoding the
// checkpoint): s's own, else the one it inherited back along its
// predecessors; 0 when none recorded one. s may be a row read without
// its checkpoint (projections.ActiveSessionsAt).
func chainCheckpointSeq(r *events.Reader, s *projections.Session, rev int64) (int64, error) {
	seen := map[string]bool{}
	for id := s.ID; id != "" && !seen[id]; id = s.PredecessorID {
		seen[id] = true
		if id != s.ID {
			prev, err := projections.SessionAt(r.Conn, id, rev)
			if err != nil || prev == nil {
				return 0, err
			}
			s = prev
		}
		seq, err := projections.LastCheckpointSeqAt(r.Conn, s.ID, rev)
		if err != nil || seq > 0 {
			return seq, err
		}
	}
	return 0, nil
}
