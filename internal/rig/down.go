package rig

import (
	"context"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// DefaultStopMessage is typed to a seat's agent when its rig goes down,
// unless the seat or `rig down --message` says otherwise. It is one line:
// tmux types it into the pane and sends Enter once. It names the
// knowledge flags, so the agent keeps its loops, decisions and facts for
// its successor instead of only its digest.
const DefaultStopMessage = "awr: rig {rig} is going down. Record a checkpoint now: awr session checkpoint --session {session} --agent {seat} --digest 'WHAT YOU DID' --next-action 'WHAT COMES NEXT', with --open-loop 'TEXT' for each unfinished thread (loops you do not resolve stay open), --resolve-loop ID=HOW for the ones you finished, --decision 'TEXT' and --fact 'TEXT' for what a successor must keep"

// DownOptions selects a rig and how to take it down.
type DownOptions struct {
	Rig      string
	Snapshot bool
	// Grace bounds the wait for each live seat's checkpoint.
	Grace time.Duration
	// Message replaces the seats' stop messages.
	Message string
}

// DownSeat is one seat in `awr rig down`.
type DownSeat struct {
	Address       string `json:"address"`
	WasRunning    bool   `json:"was_running"`
	SessionID     string `json:"session_id,omitempty"`
	StopRequested bool   `json:"stop_requested"`
	Checkpointed  bool   `json:"checkpointed"`
	CheckpointSeq int64  `json:"checkpoint_seq,omitempty"`
	Conversation  string `json:"conversation,omitempty"`
	Ended         bool   `json:"ended"`
}

// DownResult is `awr rig down`.
type DownResult struct {
	Rig             string      `json:"rig"`
	Snapshot        *string     `json:"snapshot"`
	SnapshotSeq     int64       `json:"snapshot_seq,omitempty"`
	Seats           []*DownSeat `json:"seats"`
	ProjectRevision int64       `json:"project_revision"`
}

// Down asks every live seat to checkpoint (stop_requested, and the stop
// message typed into its pane), waits up to the grace period for each
// checkpoint, optionally records a snapshot, then stops the tmux sessions
// and ends the seats' sessions as interrupted. A seat whose session is
// active but whose agent is gone is ended too.
func (m *Manager) Down(ctx context.Context, opts DownOptions) (*DownResult, error) {
	st, err := m.loadSeats(ctx, opts.Rig)
	if err != nil {
		return nil, err
	}
	if err := commands.RefuseSecrets("rig down", [2]string{"message", opts.Message}); err != nil {
		return nil, err
	}
	if st.unfinished != nil {
		// A crash left a restore unfinished: taking the rig down ends it,
		// so the next up starts afresh instead of trusting its outcomes.
		if _, err := commands.CompleteRestore(ctx, m.Env, events.RestoreCompleted{RestoreID: st.unfinished.RestoreID, Rig: st.rig, Result: Abandoned}); err != nil {
			return nil, err
		}
	}
	res := &DownResult{Rig: st.rig}
	stopSeq := map[string]int64{}
	for _, ss := range st.seats {
		s := &ss.seat
		d := &DownSeat{Address: s.Address, WasRunning: ss.alive, Conversation: s.LastConversation}
		if s.SessionActive {
			d.SessionID = s.SessionID
		}
		res.Seats = append(res.Seats, d)
		if !ss.alive {
			continue
		}
		tmpl := s.StopMessage
		if opts.Message != "" {
			tmpl = opts.Message
		}
		if tmpl == "" {
			tmpl = DefaultStopMessage
		}
		msg := renderText(tmpl, map[string]string{"seat": s.Address, "rig": s.Rig, "role": s.Role, "session": s.SessionID,
			"conversation": s.Conversation, "context_file": s.ContextFile, "project": m.Dir, "work": s.Work})
		seq, err := commands.RequestStop(ctx, m.Env, commands.StopRequest{Address: s.Address, SessionID: s.SessionID, Message: msg})
		if err != nil {
			return nil, err
		}
		stopSeq[s.Address] = seq
		d.StopRequested = true
		// A pane that cannot be typed into still gets its grace period:
		// the agent may checkpoint on its own.
		_ = m.Tmux.SendLine(ctx, s.TmuxSession, msg)
	}
	if err := m.awaitCheckpoints(ctx, st, res, stopSeq, opts.Grace); err != nil {
		return nil, err
	}
	if opts.Snapshot {
		snap, err := m.buildSnapshot(ctx, st, func(i int) bool { return res.Seats[i].Checkpointed })
		if err != nil {
			return nil, err
		}
		seq, err := commands.TakeSnapshot(ctx, m.Env, snap)
		if err != nil {
			return nil, err
		}
		res.Snapshot, res.SnapshotSeq = &snap.SnapshotID, seq
	}
	for i, ss := range st.seats {
		s := &ss.seat
		if err := m.Tmux.Kill(ctx, s.TmuxSession); err != nil {
			return nil, fault.Wrap(fault.Internal, err, "rig down: stop tmux session %s of %s", s.TmuxSession, s.Address)
		}
		if !s.SessionActive {
			continue
		}
		if _, err := commands.EndSession(ctx, m.Env, commands.EndRequest{SessionID: s.SessionID, Outcome: events.OutcomeInterrupted,
			Reason: "rig " + st.rig + " down", Agent: s.Address}); err != nil && !fault.Is(err, fault.InvalidTransition) {
			return nil, err
		}
		res.Seats[i].Ended = true
	}
	return res, m.Env.Store.Read(ctx, func(r *events.Reader) error {
		res.ProjectRevision = r.Head
		return nil
	})
}

// awaitCheckpoints waits until every seat asked to stop has checkpointed
// after the request, or the grace period ends.
func (m *Manager) awaitCheckpoints(ctx context.Context, st *rigState, res *DownResult, stopSeq map[string]int64, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	for {
		waiting := 0
		err := m.Env.Store.Read(ctx, func(r *events.Reader) error {
			for i, ss := range st.seats {
				d := res.Seats[i]
				seq, asked := stopSeq[ss.seat.Address]
				if !asked || d.Checkpointed {
					continue
				}
				sess, err := projections.SessionAt(r.Conn, ss.seat.SessionID, r.Head)
				if err != nil {
					return err
				}
				if sess != nil && sess.LastCheckpointSeq > seq {
					d.Checkpointed, d.CheckpointSeq = true, sess.LastCheckpointSeq
					continue
				}
				waiting++
			}
			return nil
		})
		if err != nil || waiting == 0 || !time.Now().Before(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(m.poll()):
		}
	}
}

// buildSnapshot reads the rig's per-seat manifest at the head, for `rig
// down --snapshot` and for `rig snapshot` (which leaves the rig running):
// each seat's session, claim, last checkpoint, conversation, directory and
// repository state. checkpointed(i) says whether seat i checkpointed after
// being asked to stop.
func (m *Manager) buildSnapshot(ctx context.Context, st *rigState, checkpointed func(i int) bool) (events.RigSnapshotTaken, error) {
	snap := events.RigSnapshotTaken{SnapshotID: m.newID(), Rig: st.rig}
	err := m.Env.Store.Read(ctx, func(r *events.Reader) error {
		snap.Watermark = r.Head
		for i, ss := range st.seats {
			s := &ss.seat
			e := events.SnapshotSeat{Address: s.Address, Conversation: s.LastConversation, Host: s.LastHost, Cwd: m.seatDir(s.Cwd),
				Running: ss.alive, Checkpointed: checkpointed(i)}
			if sess, err := projections.SessionAt(r.Conn, s.SessionID, r.Head); err != nil {
				return err
			} else if sess != nil {
				e.SessionID, e.CheckpointSeq, e.CheckpointID = sess.ID, sess.LastCheckpointSeq, sess.LastCheckpointID
				if s.SessionActive {
					e.ClaimID = s.ClaimID
				}
			}
			if cur, _, ok := m.repoState(ctx, e.Cwd); ok {
				e.RepoHead, e.WorktreeDirty, e.DirtyFingerprint = cur.Head, cur.Dirty, cur.DirtyFingerprint
			}
			snap.Seats = append(snap.Seats, e)
		}
		return nil
	})
	return snap, err
}
