package project

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

// resumeCommand is the command that continues session id.
func resumeCommand(id string) string {
	return fmt.Sprintf(`awr session resume --from-session %s --agent "$USER"`, id)
}

// lapsedSessions lists the sessions active at rev whose claim had lapsed
// at now on work nobody holds, most recently lapsed first. It reads the
// held claims (live or lapsed), not the sessions: its cost follows the
// claims nobody released.
func lapsedSessions(r *events.Reader, rev, now int64, head bool) ([]LapsedSession, error) {
	held, err := projections.HeldClaimsAt(r.Conn, rev, head)
	if err != nil {
		return nil, err
	}
	var out []LapsedSession
	seen := map[string]bool{}
	for _, c := range held {
		if c.LiveAt(now) || seen[c.SessionID] {
			continue
		}
		seen[c.SessionID] = true
		s, err := projections.SessionAt(r.Conn, c.SessionID, rev)
		if err != nil {
			return nil, err
		}
		if s == nil || s.Status != projections.SessionActive || s.SuccessorID != "" || s.Work != c.Work {
			continue
		}
		live, err := projections.LiveClaimAt(r.Conn, c.Work, rev, now, head)
		if err != nil {
			return nil, err
		}
		if live != nil {
			continue // the work moved on: the session is fenced, not lapsed
		}
		l := LapsedSession{ID: s.ID, Work: s.Work, Agent: s.Agent, ClaimID: c.ID, ExpiredAt: c.ExpiresAt, ResumeCommand: resumeCommand(s.ID)}
		// Its own last checkpoint, or the one it inherited.
		cp, err := projections.ChainCheckpointAt(r.Conn, s.ID, rev)
		if err != nil {
			return nil, err
		}
		if cp != nil {
			l.LastCheckpointSeq = cp.Seq
		}
		if l.Seat, err = projections.SeatOfSession(r.Conn, s.ID); err != nil {
			return nil, err
		}
		if _, rig, err := commands.ParseAddress(l.Seat); l.Seat != "" && err == nil {
			// A seat's session is resumed by relaunching the seat: a resume
			// by hand would leave the seat to reconcile.
			l.ResumeCommand = "awr rig up " + rig
		}
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ExpiredAt != out[j].ExpiredAt {
			return out[i].ExpiredAt > out[j].ExpiredAt
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}
