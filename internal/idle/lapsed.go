package idle

import (
	"fmt"
	"sort"

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
// page.
func Lapsed(r *events.Reader, rev, now int64, head bool, limit int) ([]LapsedSession, int, error) {
	held, err := projections.HeldClaimsAt(r.Conn, rev, head)
	if err != nil {
		return nil, 0, err
	}
	// The work items some claim holds live at now: the work moved on.
	liveOn := map[string]bool{}
	lapsed := false
	for _, c := range held {
		if c.LiveAt(now) {
			liveOn[c.Work] = true
		} else {
			lapsed = true
		}
	}
	if !lapsed {
		return nil, 0, nil
	}
	active, err := projections.ActiveSessionsAt(r.Conn, rev, head)
	if err != nil {
		return nil, 0, err
	}
	byID := make(map[string]*projections.Session, len(active))
	for i := range active {
		byID[active[i].ID] = &active[i]
	}
	var out []LapsedSession
	seen := map[string]bool{}
	for _, c := range held {
		if c.LiveAt(now) || seen[c.SessionID] {
			continue
		}
		seen[c.SessionID] = true
		s := byID[c.SessionID]
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
		// Its own last checkpoint, or the one it inherited.
		if l.LastCheckpointSeq, err = chainCheckpointSeq(r, byID[l.ID], rev); err != nil {
			return nil, 0, err
		}
		if l.Seat, err = projections.SeatOfSession(r.Conn, l.ID); err != nil {
			return nil, 0, err
		}
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
