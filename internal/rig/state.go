package rig

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/projections"
	"github.com/oklog/ulid/v2"
	"zombiezen.com/go/sqlite"
)

// Manager runs the rigs of one project.
type Manager struct {
	// Dir is the project directory.
	Dir string
	// Env is the project's command environment: its log, clock and
	// entropy.
	Env *commands.Env
	// Stale lists the sources that changed since they were indexed; an up
	// refuses to claim work on stale sources.
	Stale func(ctx context.Context) ([]string, error)
	Tmux  Tmux
	// AwrBin is the awr executable agents call (its directory is put first
	// on their PATH).
	AwrBin string
	// VerifyTimeout bounds how long a launched agent has to report its
	// conversation id.
	VerifyTimeout time.Duration
	// SeatVerifyTimeout, by seat address, replaces VerifyTimeout for that
	// seat: a test gives the seat whose agent hangs a short wait and the
	// others a long one, so that no outcome depends on how fast the
	// machine launches the agents that do report.
	SeatVerifyTimeout map[string]time.Duration
	// Poll is how often the log is read while waiting (default 100ms).
	Poll time.Duration
	// Budget is the token budget of the context packets; 0 is
	// workcontext.DefaultBudget.
	Budget int
	// TTL is the lease of the claims taken for seats; 0 is the project's
	// lease (commands.Policy.ClaimTTLms).
	TTL time.Duration
	// Crashpoint, for crash tests only: "restore_started" or
	// "seat_restored:N" kills the process right after that event.
	Crashpoint string
	restored   int
}

func (m *Manager) poll() time.Duration {
	if m.Poll <= 0 {
		return 100 * time.Millisecond
	}
	return m.Poll
}

func (m *Manager) newID() string {
	return ulid.MustNew(ulid.Timestamp(m.Env.Now()), m.Env.Entropy).String()
}

// TmuxName is the tmux session a seat runs in, awr-<project hash>-ROLE@RIG:
// derived from the project directory and the address, so two projects or
// two seats never share one.
func (m *Manager) TmuxName(address string) string {
	abs, err := filepath.Abs(m.Dir)
	if err != nil {
		abs = m.Dir
	}
	sum := sha256.Sum256([]byte(abs))
	// '@' cannot occur in a role or a rig name, so two addresses never
	// share a session name (with '-' they could: a-b@c and a@b-c).
	return fmt.Sprintf("awr-%s-%s", hex.EncodeToString(sum[:3]), address)
}

// seatState is one seat with what a restore needs to know about it.
type seatState struct {
	seat projections.Seat
	// alive: the seat's session is active and its tmux pane runs.
	alive bool
	// snap is the seat's entry in the snapshot that describes its last
	// stop, if any.
	snap *events.SnapshotSeat
	// attempt is the outcome recorded for the seat in the unfinished
	// restore attempt; launched says it was launched in that attempt.
	attempt  *events.SeatRestored
	launched bool
	// workIssue says why the seat's work cannot be claimed now (head only).
	workIssue string
	// ref is the newest recorded repository state of the seat (snapshot
	// entry, last checkpoint, last launch), nil when none recorded one.
	ref *repoRef
	// successors are the sessions someone resumed from the seat's session
	// by hand, oldest first: until `awr seat reconcile` adopts one, the
	// seat cannot be relaunched.
	successors []string
}

// stopConfirmed says whether the seat's last stop was confirmed by a
// checkpoint: its entry in the snapshot of that stop says it checkpointed
// after being asked to. A machine restart, a crash mid-checkpoint or an
// ignored stop leave it unconfirmed.
func (ss *seatState) stopConfirmed() bool {
	return ss.snap != nil && ss.snap.Checkpointed
}

// handResumed fills ss.successors as of rev.
func (ss *seatState) handResumed(conn *sqlite.Conn, rev int64) error {
	if ss.seat.SessionID == "" || ss.seat.SessionActive {
		return nil
	}
	chain, err := commands.SuccessorChain(conn, ss.seat.SessionID, rev)
	if err != nil {
		return err
	}
	ss.successors = chain[1:]
	return nil
}

// reconcileHint is the command that adopts a hand-resumed session.
func reconcileHint(address string) string {
	return fmt.Sprintf("awr seat reconcile %s --reason 'WHAT YOU CHECKED'", address)
}

// repoRef is a recorded repository state a restore compares with.
type repoRef struct {
	// label names it: "snapshot ID", "checkpoint ID", "launch at seq N".
	label string
	seq   int64
	repo  events.SeatRepo
	// state is a checkpoint's full record: .awr is excluded from it at
	// comparison time, where its path in the work tree is known.
	state *repo.State
}

// offer keeps the newest of the seat's references.
func (ss *seatState) offer(r *repoRef) {
	if ss.ref == nil || r.seq > ss.ref.seq {
		ss.ref = r
	}
}

// references finds the seat's recorded repository states as of rev: its
// entry in the latest snapshot when a checkpoint confirmed its stop, its
// session chain's last checkpoint and its last launch (unless that launch
// belongs to the unfinished attempt). The newest is the one a restore
// compares with. An entry whose stop no checkpoint confirmed (the agent
// crashed mid-checkpoint, ignored the stop, or was not running) is never
// a reference: it recorded the worktree with whatever the agent left
// unrecorded, and taking it as the baseline would hide that work.
func (ss *seatState) references(r *events.Reader, snap *events.RigSnapshotTaken, snapSeq, rev int64) error {
	s := &ss.seat
	if snap != nil {
		for _, e := range snap.Seats {
			if e.Address == s.Address && e.Checkpointed && (e.RepoHead != "" || e.WorktreeDirty) {
				ss.offer(&repoRef{label: "snapshot " + snap.SnapshotID, seq: snapSeq,
					repo: events.SeatRepo{Head: e.RepoHead, Dirty: e.WorktreeDirty, DirtyFingerprint: e.DirtyFingerprint}})
			}
		}
	}
	if s.SessionID != "" {
		cp, err := projections.ChainCheckpointAt(r.Conn, s.SessionID, rev)
		if err != nil {
			return err
		}
		if cp != nil && cp.Repo != nil && cp.Repo.State != nil {
			st := cp.Repo.State
			ss.offer(&repoRef{label: "checkpoint " + cp.ID, seq: cp.Seq, state: st,
				repo: events.SeatRepo{Head: st.Head, Dirty: st.Dirty, DirtyFingerprint: st.DirtyFingerprint}})
		}
	}
	if s.LaunchRepo != nil && !ss.launched {
		// A launch of the unfinished attempt recorded the repository as
		// that attempt found it: the reference is what came before.
		ss.offer(&repoRef{label: fmt.Sprintf("launch at seq %d", s.LaunchedSeq), seq: s.LaunchedSeq, repo: *s.LaunchRepo})
	}
	return nil
}

// rigState is a rig as a restore or a ps sees it.
type rigState struct {
	rig         string
	head        int64
	seats       []*seatState
	snapshot    *events.RigSnapshotTaken
	snapshotSeq int64
	// unfinished is the restore attempt started and never completed.
	unfinished *events.RestoreStarted
	// lastResult is the result of the last completed restore.
	lastResult string
}

// load reads the rig at rev; live says whether to look at tmux (head
// only).
func (m *Manager) load(ctx context.Context, rig string, at commands.Read, live bool) (*rigState, error) {
	if err := commands.CheckRigName(rig); err != nil {
		return nil, err
	}
	st := &rigState{rig: rig}
	err := m.Env.Store.Read(ctx, func(r *events.Reader) error {
		rev, _, err := at.Resolve(r, 0)
		if err != nil {
			return err
		}
		st.head = rev
		seats, err := projections.SeatsAt(r.Conn, rig, rev)
		if err != nil {
			return err
		}
		log, err := projections.RigLogAt(r.Conn, rig, rev)
		if err != nil {
			return err
		}
		if err := st.foldLog(log); err != nil {
			return err
		}
		for i := range seats {
			ss := &seatState{seat: seats[i]}
			if st.unfinished != nil {
				if err := ss.foldAttempt(r.Conn, st.unfinished.RestoreID, rev); err != nil {
					return err
				}
			}
			if st.snapshot != nil && (st.snapshotSeq > ss.seat.LaunchedSeq || ss.launched) {
				for j := range st.snapshot.Seats {
					if st.snapshot.Seats[j].Address == ss.seat.Address {
						ss.snap = &st.snapshot.Seats[j]
					}
				}
			}
			if err := ss.references(r, st.snapshot, st.snapshotSeq, rev); err != nil {
				return err
			}
			if err := ss.handResumed(r.Conn, rev); err != nil {
				return err
			}
			if live {
				if ss.workIssue, err = workIssue(r, ss, m.Env.Now().UnixMilli()); err != nil {
					return err
				}
			}
			st.seats = append(st.seats, ss)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if live {
		for _, ss := range st.seats {
			ss.alive = ss.seat.SessionActive && m.paneAlive(ctx, &ss.seat)
		}
	}
	return st, nil
}

// foldLog reads the rig's log: its latest snapshot, the restore started
// last that never completed, and the result of the last that did.
func (st *rigState) foldLog(log []projections.RigLogEntry) error {
	open := map[string]*events.RestoreStarted{}
	var order []string
	for _, e := range log {
		switch events.Kind(e.Kind) {
		case events.KindRigSnapshotTaken:
			var s events.RigSnapshotTaken
			if err := json.Unmarshal(e.Data, &s); err != nil {
				return err
			}
			st.snapshot, st.snapshotSeq = &s, e.Seq
		case events.KindRestoreStarted:
			var s events.RestoreStarted
			if err := json.Unmarshal(e.Data, &s); err != nil {
				return err
			}
			open[s.RestoreID] = &s
			order = append(order, s.RestoreID)
		case events.KindRestoreCompleted:
			var s events.RestoreCompleted
			if err := json.Unmarshal(e.Data, &s); err != nil {
				return err
			}
			delete(open, s.RestoreID)
			st.lastResult = s.Result
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if a, ok := open[order[i]]; ok {
			st.unfinished = a
			break
		}
	}
	return nil
}

// foldAttempt reads what the unfinished restore restoreID did with the
// seat: whether it launched it, and the outcome it recorded.
func (ss *seatState) foldAttempt(conn *sqlite.Conn, restoreID string, rev int64) error {
	entries, err := projections.SeatLogAt(conn, ss.seat.Address, rev)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch e.Kind {
		case "launched":
			var l events.SeatLaunched
			if json.Unmarshal(e.Data, &l) == nil && l.RestoreID == restoreID {
				ss.launched = true
			}
		case "restored":
			var o events.SeatRestored
			if json.Unmarshal(e.Data, &o) == nil && o.RestoreID == restoreID {
				ss.attempt = &o
			}
		}
	}
	return nil
}

// workIssue says why a launch could not claim the seat's work now, or "".
// The seat's own session's claim is no obstacle: a launch takes it over;
// nor is that of a session resumed from it by hand, which a reconcile
// makes the seat's.
func workIssue(r *events.Reader, ss *seatState, now int64) (string, error) {
	s := &ss.seat
	if s.Work == "" {
		return "the seat has no work item to claim", nil
	}
	rd, ok, err := projections.ReadinessOf(r.Conn, s.Work, r.Head, now, true)
	if err != nil || !ok {
		return fmt.Sprintf("work item %s not found", s.Work), err
	}
	for _, reason := range rd.Reasons {
		if reason.Code == projections.ReasonClaimed && rd.Claim != nil && (rd.Claim.SessionID == s.SessionID || slices.Contains(ss.successors, rd.Claim.SessionID)) {
			continue
		}
		return fmt.Sprintf("cannot claim %s: %s", s.Work, reason.Message), nil
	}
	return "", nil
}

// paneAlive: the seat's tmux session exists and its command still runs
// (a command that left its exit status has ended, though its shell may
// still hold the pane for awr to read).
func (m *Manager) paneAlive(ctx context.Context, s *projections.Seat) bool {
	if !m.Tmux.Has(ctx, s.TmuxSession) {
		return false
	}
	if _, exited := exitStatus(ctx, s.ContextFile); exited {
		return false
	}
	p, err := m.Tmux.Pane(ctx, s.TmuxSession)
	return err == nil && !p.Dead
}

// loadSeats is load of the rig at the head, looking at tmux, refused
// (NotFound) when the rig has no seats.
func (m *Manager) loadSeats(ctx context.Context, rig string) (*rigState, error) {
	st, err := m.load(ctx, rig, commands.Read{}, true)
	if err != nil {
		return nil, err
	}
	if err := requireSeats(st); err != nil {
		return nil, err
	}
	return st, nil
}

func requireSeats(st *rigState) error {
	if len(st.seats) == 0 {
		return fault.New(fault.NotFound, "rig %s has no seats", st.rig).With("rig", st.rig).
			WithHint("awr seat add ROLE@%s --runtime generic --command 'my-agent {context_file}'", st.rig)
	}
	return nil
}

// scope names the stop a decision is about.
func (st *rigState) scope(ss *seatState) string {
	if ss.snap != nil {
		return "snapshot:" + st.snapshot.SnapshotID
	}
	return "session:" + ss.seat.SessionID
}
