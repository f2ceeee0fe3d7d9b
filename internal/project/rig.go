package project

import (
	"context"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/rig"
	"github.com/awr-dev/awr/internal/shellwords"
)

// RigOptions configures the launcher of the rig operations.
type RigOptions struct {
	// TmuxSocket selects a private tmux server (tmux -L); the default
	// server when empty.
	TmuxSocket string
	// AwrBin is the awr executable the agents call.
	AwrBin string
	// Crashpoint, honoured only by binaries built with the awrtest tag,
	// kills the process right after a named event (crash tests).
	Crashpoint string
}

// The seat and rig requests whose decisions live in commands, and their
// results.
type (
	// SeatAddRequest is `awr seat add` and awr_seat_add.
	SeatAddRequest = commands.SeatRequest
	// SeatRemoveRequest is `awr seat remove` and awr_seat_remove.
	SeatRemoveRequest = commands.RemoveSeatRequest
	// SeatResult is a seat after a declaration or removal.
	SeatResult = commands.SeatResult
	// SeatClearAttentionRequest is `awr seat clear-attention` and
	// awr_seat_clear_attention.
	SeatClearAttentionRequest = commands.ClearAttentionRequest
	// SeatClearAttentionResult is a seat after its attention was answered.
	SeatClearAttentionResult = commands.ClearAttentionResult
	// SeatReconcileRequest is `awr seat reconcile` and awr_seat_reconcile.
	SeatReconcileRequest = commands.ReconcileRequest
	// SeatReconcileResult is a seat after it adopted a hand-resumed session.
	SeatReconcileResult = commands.ReconcileResult
	// PsResult is `awr rig ps`.
	PsResult = rig.PsResult
	// PsSeat is one seat of a rig as `awr rig ps` shows it.
	PsSeat = rig.PsSeat
	// SeatListResult is `awr seat list`.
	SeatListResult = rig.ListResult
	// SeatShowResult is `awr seat show`.
	SeatShowResult = rig.ShowResult
	// RigUpResult is `awr rig up`.
	RigUpResult = rig.UpResult
	// RigDownResult is `awr rig down`.
	RigDownResult = rig.DownResult
	// RigApplyResult is `awr rig apply`.
	RigApplyResult = rig.ApplyResult
	// RigRestoreCheckResult is `awr rig restore-check`.
	RigRestoreCheckResult = rig.RestoreCheckResult
	// RigCheck is one check of `awr rig restore-check`.
	RigCheck = rig.Check
)

// The outcomes a seat's restore reports.
const (
	OutcomeResumed     = events.SeatResumed
	OutcomeFreshPrimed = events.SeatFreshPrimed
	OutcomeRunning     = events.SeatRunning
)

// rigManager returns the rig manager over the project's log.
func (p *Project) rigManager(ctx context.Context) (*rig.Manager, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	bin := p.opts.Rig.AwrBin
	if bin == "" {
		bin = rig.SiblingAwr()
	}
	return &rig.Manager{Dir: p.dir, Env: env, Stale: p.StaleSources, Tmux: rig.Tmux{Socket: p.opts.Rig.TmuxSocket},
		AwrBin: bin, Crashpoint: p.opts.Rig.Crashpoint}, nil
}

// onRig runs fn on the rig manager over the project's log
// (rigManager), as command runs a command on its environment.
func onRig[Res any](ctx context.Context, p *Project, fn func(*rig.Manager) (*Res, error)) (*Res, error) {
	m, err := p.rigManager(ctx)
	if err != nil {
		return nil, err
	}
	return fn(m)
}

// SeatAdd declares a seat (unchanged declarations write nothing).
// Errors: InvalidInput for a --cwd outside the project and its git
// worktrees (p.workDir); those of commands.DeclareSeat.
func (p *Project) SeatAdd(ctx context.Context, req SeatAddRequest) (*SeatResult, error) {
	if req.Cwd != "" {
		if _, err := p.workDir("seat add", "--cwd", req.Cwd, false); err != nil {
			return nil, err.WithHint("awr seat add %s --runtime %s --cwd .", shellwords.Quote(req.Address), shellwords.Quote(orGeneric(req.Runtime)))
		}
	}
	return command(ctx, p, commands.DeclareSeat, req)
}

// orGeneric is runtime, or generic when it is not given.
func orGeneric(runtime string) string {
	if runtime == "" {
		return events.RuntimeGeneric
	}
	return runtime
}

// SeatRemove retires a stopped seat. Errors: those of commands.RemoveSeat.
func (p *Project) SeatRemove(ctx context.Context, req SeatRemoveRequest) (*SeatResult, error) {
	return command(ctx, p, commands.RemoveSeat, req)
}

// SeatClearAttention records a person's answer to a seat's
// attention_required. Errors: those of commands.ClearSeatAttention.
func (p *Project) SeatClearAttention(ctx context.Context, req SeatClearAttentionRequest) (*SeatClearAttentionResult, error) {
	return command(ctx, p, commands.ClearSeatAttention, req)
}

// SeatReconcile adopts, as the seat's session, the session someone
// resumed from it by hand, recording who (By, default the login name of
// the user running awr) and why; it types nothing into the seat's pane.
// Errors: those of commands.ReconcileSeat.
func (p *Project) SeatReconcile(ctx context.Context, req SeatReconcileRequest) (*SeatReconcileResult, error) {
	if strings.TrimSpace(req.By) == "" {
		req.By = loginName()
	}
	return onRig(ctx, p, func(m *rig.Manager) (*SeatReconcileResult, error) { return m.Reconcile(ctx, req) })
}

// loginName is the user running awr, for records of who decided.
func loginName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if n := os.Getenv("USER"); n != "" {
		return n
	}
	return "unknown"
}

// SeatShowRequest is `awr seat show` and awr_seat_show.
type SeatShowRequest struct {
	Address string `arg:"" name:"address" json:"address" help:"Seat address ROLE@RIG." placeholder:"ROLE@RIG"`
	Read
}

// SeatShow returns a seat with its occupants over time.
// Errors: InvalidInput for a malformed address; NotFound.
func (p *Project) SeatShow(ctx context.Context, req SeatShowRequest) (*SeatShowResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*SeatShowResult, error) { return m.Show(ctx, req.Address, req.Read) })
}

// SeatListRequest is `awr seat list` and awr_seat_list.
type SeatListRequest struct {
	Rig string `name:"rig" json:"rig,omitempty" help:"Only this rig's seats." placeholder:"NAME"`
	Read
}

// SeatList lists the seats of every rig, or of one.
// Errors: InvalidInput for a malformed rig name.
func (p *Project) SeatList(ctx context.Context, req SeatListRequest) (*SeatListResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*SeatListResult, error) { return m.List(ctx, req.Rig, req.Read) })
}

// RigPsRequest is `awr rig ps` and awr_rig_ps.
type RigPsRequest struct {
	Rig string `arg:"" name:"rig" json:"rig" help:"Rig name." placeholder:"NAME"`
	Read
}

// RigPs lists a rig's seats with their state; at the head it also says
// whether each seat's tmux pane runs.
// Errors: InvalidInput for a malformed name; NotFound for a rig without
// seats.
func (p *Project) RigPs(ctx context.Context, req RigPsRequest) (*PsResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*PsResult, error) { return m.Ps(ctx, req.Rig, req.Read) })
}

// RigUpRequest is `awr rig up`.
type RigUpRequest struct {
	Rig           string        `arg:"" name:"rig" json:"rig" help:"Rig name." placeholder:"NAME"`
	Fresh         []string      `name:"fresh" json:"fresh,omitempty" help:"Relaunch this seat with a new conversation (repeatable); the decision is recorded." placeholder:"ROLE@RIG"`
	Plan          bool          `name:"plan" json:"plan,omitempty" help:"Show the per-seat decisions without touching anything."`
	VerifyTimeout time.Duration `name:"verify-timeout" default:"30s" json:"verify_timeout,omitempty" help:"How long a launched agent has to report its conversation id."`
	TTL           time.Duration `name:"ttl" default:"0s" json:"ttl,omitempty" help:"Lease of the claims taken for seats (default 0s: the project's lease, the manifest's continuity.claim_ttl_ms, 1h when unset)."`
}

// RigUp launches every stopped seat of a rig, restoring from its latest
// snapshot, and reports one outcome per seat. Unless every seat is
// resumed, fresh-primed or running, the result comes with a
// RestoreIncomplete error whose hint is the first seat's next command.
// Errors: those of rig.Manager.Up; RestoreIncomplete (rig.UpResult.Incomplete).
func (p *Project) RigUp(ctx context.Context, req RigUpRequest) (*RigUpResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*RigUpResult, error) {
		m.VerifyTimeout, m.TTL = req.VerifyTimeout, req.TTL
		res, err := m.Up(ctx, rig.UpOptions{Rig: req.Rig, Fresh: req.Fresh, Plan: req.Plan})
		if err != nil {
			return nil, err
		}
		return res, res.Incomplete(req.Rig, req.Plan)
	})
}

// RigRestoreCheckRequest is `awr rig restore-check` and
// awr_rig_restore_check.
type RigRestoreCheckRequest struct {
	Rig string `arg:"" name:"rig" json:"rig" help:"Rig name." placeholder:"NAME"`
}

// RigRestoreCheck looks at everything a `rig up` of the rig depends on,
// per seat, and writes nothing. Unless the up would come back
// fully_restored with no red check, the result comes with a
// RestoreIncomplete error whose hint is the first remediation.
// Errors: those of rig.Manager.RestoreCheck; RestoreIncomplete
// (rig.RestoreCheckResult.Incomplete).
func (p *Project) RigRestoreCheck(ctx context.Context, req RigRestoreCheckRequest) (*RigRestoreCheckResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*RigRestoreCheckResult, error) {
		res, err := m.RestoreCheck(ctx, req.Rig)
		if err != nil {
			return nil, err
		}
		return res, res.Incomplete(req.Rig)
	})
}

// RigDownRequest is `awr rig down`.
type RigDownRequest struct {
	Rig      string        `arg:"" name:"rig" json:"rig" help:"Rig name." placeholder:"NAME"`
	Snapshot bool          `name:"snapshot" json:"snapshot,omitempty" help:"Record a snapshot (per-seat manifest) to restore from."`
	Grace    time.Duration `name:"grace" default:"30s" json:"grace,omitempty" help:"How long to wait for the live seats' checkpoints (one deadline for all)."`
	Message  string        `name:"message" json:"message,omitempty" help:"Message typed to each agent instead of its seat's stop message." placeholder:"TEXT"`
}

// RigDown asks each live seat to checkpoint, optionally snapshots the rig,
// then stops the seats. Errors: those of rig.Manager.Down.
func (p *Project) RigDown(ctx context.Context, req RigDownRequest) (*RigDownResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*RigDownResult, error) {
		return m.Down(ctx, rig.DownOptions{Rig: req.Rig, Snapshot: req.Snapshot, Grace: req.Grace, Message: req.Message})
	})
}

// RigApplyRequest is `awr rig apply`.
type RigApplyRequest struct {
	File string `arg:"" name:"file" json:"file" help:"YAML spec." placeholder:"FILE"`
}

// RigApply declares a rig's seats from a YAML spec; seats it no longer
// lists are removed. Errors: InvalidInput at FILE:LINE; those of
// commands.ApplyRig.
func (p *Project) RigApply(ctx context.Context, req RigApplyRequest) (*RigApplyResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*RigApplyResult, error) { return m.Apply(ctx, req.File) })
}

// RigSendResult is `awr rig send`.
type RigSendResult = rig.SendResult

// RigCaptureResult is `awr rig capture`.
type RigCaptureResult = rig.CaptureResult

// RigSnapshotResult is `awr rig snapshot`.
type RigSnapshotResult = rig.SnapshotResult

// RigSendRequest is `awr rig send` and awr_rig_send.
type RigSendRequest struct {
	Seat      string `arg:"" name:"seat" json:"seat" help:"Seat address ROLE@RIG." placeholder:"ROLE@RIG"`
	Text      string `arg:"" name:"text" json:"text" help:"What to type into the seat's pane (plain text and newlines; Enter is pressed after it)." placeholder:"TEXT"`
	Agent     string `name:"agent" json:"agent,omitempty" help:"Who sends it (a label, recorded for the audit)." placeholder:"LABEL"`
	RequestID string `name:"request-id" json:"request_id,omitempty" help:"Make a retried send idempotent: the same id returns the first answer and types nothing." placeholder:"ID"`
}

// RigSend types a message into a running seat's pane, then Enter, and
// records it (seat_message_sent) first.
// Errors: those of rig.Manager.Send.
func (p *Project) RigSend(ctx context.Context, req RigSendRequest) (*RigSendResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*RigSendResult, error) {
		return m.Send(ctx, rig.SendOptions{Address: req.Seat, Text: req.Text, Agent: req.Agent, RequestID: req.RequestID})
	})
}

// RigCaptureRequest is `awr rig capture` and awr_rig_capture.
type RigCaptureRequest struct {
	Seat  string `arg:"" name:"seat" json:"seat" help:"Seat address ROLE@RIG." placeholder:"ROLE@RIG"`
	Lines int    `name:"lines" json:"lines,omitempty" help:"How many of the pane's last lines (1 to 2000; 0 or omitted: 50)." placeholder:"N"`
}

// RigCapture returns the last lines of a seat's pane, lines that look
// like a credential withheld. It writes nothing.
// Errors: those of rig.Manager.Capture.
func (p *Project) RigCapture(ctx context.Context, req RigCaptureRequest) (*RigCaptureResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*RigCaptureResult, error) { return m.Capture(ctx, req.Seat, req.Lines) })
}

// RigSnapshotRequest is `awr rig snapshot` and awr_rig_snapshot.
type RigSnapshotRequest struct {
	Rig string `arg:"" name:"rig" json:"rig" help:"Rig name." placeholder:"NAME"`
}

// RigSnapshot records a snapshot of a running rig and leaves it running.
// Errors: those of rig.Manager.Snapshot.
func (p *Project) RigSnapshot(ctx context.Context, req RigSnapshotRequest) (*RigSnapshotResult, error) {
	return onRig(ctx, p, func(m *rig.Manager) (*RigSnapshotResult, error) { return m.Snapshot(ctx, req.Rig) })
}
