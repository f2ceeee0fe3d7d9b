package rig

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/secret"
	"github.com/awr-dev/awr/projections"
)

// Talking to a running rig without attaching to it: a message typed into
// a seat's pane, the pane's last lines, and a snapshot that leaves every
// seat running.

// Bounds of `awr rig capture`.
const (
	DefaultCaptureLines = 50
	MaxCaptureLines     = 2000
)

// SendOptions is a message for one seat. Agent names the sender (for the
// audit); RequestID makes a retried send type nothing twice.
type SendOptions struct {
	Address   string
	Text      string
	Agent     string
	RequestID string
}

// SendResult is `awr rig send`.
type SendResult struct {
	Address         string `json:"address"`
	SessionID       string `json:"session_id"`
	TmuxSession     string `json:"tmux_session"`
	Bytes           int    `json:"bytes"`
	Seq             int64  `json:"seq"`
	Replayed        bool   `json:"replayed,omitempty"`
	ProjectRevision int64  `json:"project_revision"`
}

// Send types a message into a running seat's pane, then Enter. The
// message is recorded first (seat_message_sent: who sent what to which
// seat), so the log holds every attempt to talk to an agent.
// Errors: InvalidInput for a malformed address, an empty text, one over
// commands.MaxMessageBytes or one holding a control character other than
// newline; RuleViolation for a secret; NotFound for an unknown seat;
// InvalidTransition for a seat that is not running (hint: rig up);
// Internal when tmux cannot type into the pane (the message stays
// recorded).
func (m *Manager) Send(ctx context.Context, opts SendOptions) (*SendResult, error) {
	_, rig, err := commands.ParseAddress(opts.Address)
	if err != nil {
		return nil, err
	}
	if err := commands.CheckMessage("rig send", opts.Text); err != nil {
		return nil, err
	}
	s, _, err := m.seatAtHead(ctx, opts.Address)
	if err != nil {
		return nil, err
	}
	if !s.SessionActive || !m.paneAlive(ctx, s) {
		return nil, fault.New(fault.InvalidTransition, "rig send: seat %s is not running", opts.Address).With("address", opts.Address).
			WithHint("awr rig up %s", rig)
	}
	rec, err := commands.SendMessage(ctx, m.Env, commands.MessageRequest{Address: opts.Address, SessionID: s.SessionID, Agent: opts.Agent,
		Text: opts.Text, WriteMeta: commands.WriteMeta{RequestID: opts.RequestID}})
	if err != nil {
		return nil, err
	}
	res := &SendResult{Address: opts.Address, SessionID: s.SessionID, TmuxSession: s.TmuxSession, Bytes: len(opts.Text), Seq: rec.Seq,
		Replayed: rec.Replayed, ProjectRevision: rec.ProjectRevision}
	if rec.Replayed {
		return res, nil
	}
	if err := m.Tmux.SendText(ctx, s.TmuxSession, opts.Text); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "rig send: type into tmux session %s of %s (the message is recorded at seq %d)", s.TmuxSession, opts.Address, rec.Seq)
	}
	return res, nil
}

// CaptureResult is `awr rig capture`.
type CaptureResult struct {
	Address     string `json:"address"`
	TmuxSession string `json:"tmux_session"`
	// Running says whether the seat's agent still runs; a pane whose
	// agent exited keeps its last lines until the rig goes down.
	Running bool     `json:"running"`
	Lines   []string `json:"lines"`
	// Withheld counts the lines replaced because they looked like a
	// credential.
	Withheld        int   `json:"withheld"`
	ProjectRevision int64 `json:"project_revision"`
}

// Capture returns the last lines of a seat's pane (n, DefaultCaptureLines
// when 0), each line that looks like a credential replaced by a note
// naming its kind. It reads tmux and writes nothing.
// Errors: InvalidInput for a malformed address or n outside 1 to
// MaxCaptureLines; NotFound for an unknown seat; InvalidTransition for a
// seat without a pane (never launched, or taken down); Internal when tmux
// cannot read the pane.
func (m *Manager) Capture(ctx context.Context, address string, n int) (*CaptureResult, error) {
	_, rig, err := commands.ParseAddress(address)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		n = DefaultCaptureLines
	}
	if n < 1 || n > MaxCaptureLines {
		return nil, fault.New(fault.InvalidInput, "rig capture: --lines %d: capture 1 to %d lines (leave it out for %d)", n, MaxCaptureLines, DefaultCaptureLines).
			With("flag", "--lines").With("min", 1).With("max", MaxCaptureLines).WithHint("awr rig capture %s --lines %d", address, MaxCaptureLines)
	}
	s, head, err := m.seatAtHead(ctx, address)
	if err != nil {
		return nil, err
	}
	if s.TmuxSession == "" || !m.Tmux.Has(ctx, s.TmuxSession) {
		return nil, fault.New(fault.InvalidTransition, "rig capture: seat %s has no pane: it is not running", address).With("address", address).
			WithHint("awr rig up %s", rig)
	}
	lines, err := m.Tmux.Capture(ctx, s.TmuxSession, n)
	if err != nil {
		return nil, fault.Wrap(fault.Internal, err, "rig capture: read tmux session %s of %s", s.TmuxSession, address)
	}
	res := &CaptureResult{Address: address, TmuxSession: s.TmuxSession, Running: s.SessionActive && m.paneAlive(ctx, s),
		Lines: lines, ProjectRevision: head}
	if res.Lines == nil {
		res.Lines = []string{}
	}
	res.Withheld = withhold(res.Lines)
	return res, nil
}

// withhold replaces each line that looks like a credential with a note
// naming its kind, and returns how many it replaced. The pane is the
// agent's screen: what it shows must not leave awr as it is.
func withhold(lines []string) int {
	n := 0
	for i, line := range lines {
		if f, ok := secret.Find(line); ok {
			lines[i] = "[line withheld: it looks like a " + f.Kind + "]"
			n++
		}
	}
	return n
}

// SnapshotResult is `awr rig snapshot`: the manifest recorded, as `rig
// down --snapshot` records it.
type SnapshotResult struct {
	Rig             string                `json:"rig"`
	Snapshot        string                `json:"snapshot"`
	SnapshotSeq     int64                 `json:"snapshot_seq"`
	Watermark       int64                 `json:"watermark"`
	Seats           []events.SnapshotSeat `json:"seats"`
	ProjectRevision int64                 `json:"project_revision"`
}

// Snapshot records a snapshot of a running rig (rig_snapshot_taken) and
// leaves every seat running: the same per-seat manifest `rig down
// --snapshot` records, with "checkpointed": false (no seat was asked to
// stop). A later `rig up` restores from it, as from a down's.
// Errors: InvalidInput for a malformed name; NotFound for a rig without
// seats; InvalidTransition when no seat runs (the last down's snapshot
// stands) or a restore is unfinished (hint: rig up); RevisionConflict
// when a restore started while the snapshot was read.
func (m *Manager) Snapshot(ctx context.Context, rig string) (*SnapshotResult, error) {
	st, err := m.loadSeats(ctx, rig)
	if err != nil {
		return nil, err
	}
	if st.unfinished != nil {
		return nil, fault.New(fault.InvalidTransition, "rig snapshot: restore %s of rig %s is unfinished", st.unfinished.RestoreID, rig).
			With("rig", rig).With("restore_id", st.unfinished.RestoreID).WithHint("awr rig up %s", rig)
	}
	running := 0
	for _, ss := range st.seats {
		if ss.alive {
			running++
		}
	}
	if running == 0 {
		return nil, fault.New(fault.InvalidTransition, "rig snapshot: no seat of rig %s is running; a restore uses the snapshot of its last down", rig).
			With("rig", rig).WithHint("awr rig up %s", rig)
	}
	snap, err := m.buildSnapshot(ctx, st, func(int) bool { return false })
	if err != nil {
		return nil, err
	}
	seq, err := commands.TakeLiveSnapshot(ctx, m.Env, snap, st.head)
	if err != nil {
		return nil, err
	}
	return &SnapshotResult{Rig: rig, Snapshot: snap.SnapshotID, SnapshotSeq: seq, Watermark: snap.Watermark, Seats: snap.Seats, ProjectRevision: seq}, nil
}

// seatAtHead reads a seat at the head, and the head. Errors: NotFound.
func (m *Manager) seatAtHead(ctx context.Context, address string) (s *projections.Seat, head int64, err error) {
	err = m.Env.Store.Read(ctx, func(r *events.Reader) error {
		head = r.Head
		s, err = commands.RequireSeat(r.Conn, address, r.Head)
		return err
	})
	return s, head, err
}
