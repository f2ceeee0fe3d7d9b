package commands

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// RepairRequest is one repair of `awr doctor repair`: the id it repairs
// and why (recorded in the log).
type RepairRequest struct {
	ID     string `arg:"" name:"id" json:"id" help:"The id to repair (a claim, a session or an execution)." placeholder:"ID"`
	Reason string `name:"reason" required:"" json:"reason" help:"What you checked and why it is repaired (recorded in the log)." placeholder:"TEXT"`
	WriteMeta
}

// RepairResult is the event a repair wrote.
type RepairResult struct {
	Replay
	Repair          string `json:"repair"`
	ID              string `json:"id"`
	Kind            string `json:"kind"`
	Seq             int64  `json:"seq"`
	Reason          string `json:"reason"`
	ProjectRevision int64  `json:"project_revision"`
}

// The repairs of `awr doctor repair`.
const (
	RepairExpireClaim      = "expire-claim"
	RepairEndSession       = "end-session"
	RepairAbandonExecution = "abandon-execution"
)

func checkRepair(op string, req RepairRequest) error {
	if err := required("id", req.ID); err != nil {
		return err
	}
	if err := required("reason", req.Reason); err != nil {
		return err
	}
	return refuseSecrets(op, [2]string{"reason", req.Reason})
}

// ExpireClaim releases a held claim that no live agent will release
// (claim_released, reason repaired, the reason in note), so its work can
// be claimed again. The holder session keeps running, without a claim.
// Errors: InvalidInput for an empty id or reason; RuleViolation for a
// reason that holds a secret; NotFound for an unknown claim;
// InvalidTransition for a claim that is no longer held.
func ExpireClaim(ctx context.Context, env *Env, req RepairRequest) (*RepairResult, error) {
	const op = "doctor repair expire-claim"
	if err := checkRepair(op, req); err != nil {
		return nil, err
	}
	return write(ctx, env, "awr doctor", req.WriteMeta, nil, req, func(tx *events.Tx) (*RepairResult, error) {
		c, err := projections.ClaimAt(tx.Conn, req.ID, tx.Head())
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, fault.New(fault.NotFound, "%s: claim %s not found", op, req.ID).With("claim_id", req.ID).WithHint("awr doctor")
		}
		if c.State != projections.ClaimHeld {
			return nil, fault.New(fault.InvalidTransition, "%s: claim %s on %s is already %s", op, c.ID, c.Work, c.State).
				With("claim_id", c.ID).WithHint("awr work show %s", c.Work)
		}
		if err := tx.Guard("work/" + c.Work); err != nil {
			return nil, err
		}
		e, err := tx.Append(events.NewEvent{Stream: "work/" + c.Work, Payload: events.ClaimReleased{
			ClaimID: c.ID, Work: c.Work, SessionID: c.SessionID, Reason: events.ReleaseRepaired, Note: req.Reason,
		}})
		if err != nil {
			return nil, err
		}
		return &RepairResult{Repair: RepairExpireClaim, ID: c.ID, Kind: string(e.Kind), Seq: e.Seq, Reason: req.Reason, ProjectRevision: tx.Head()}, nil
	})
}

// EndStaleSession ends an active session as abandoned, the reason
// recorded (session_ended; its claim, if any, released).
// Errors: those of EndSession.
func EndStaleSession(ctx context.Context, env *Env, req RepairRequest) (*RepairResult, error) {
	if err := checkRepair("doctor repair end-session", req); err != nil {
		return nil, err
	}
	res, err := EndSession(ctx, env, EndRequest{SessionID: req.ID, Outcome: events.OutcomeAbandoned, Reason: "doctor: " + req.Reason, Agent: "awr doctor", WriteMeta: req.WriteMeta})
	if err != nil {
		return nil, err
	}
	return &RepairResult{Repair: RepairEndSession, ID: req.ID, Kind: string(events.KindSessionEnded), Seq: res.Session.Revision, Reason: req.Reason, ProjectRevision: res.ProjectRevision}, nil
}

// AbandonExecution records the finish of an execution whose process is
// gone (state unknown): exit code -1 with the reason as its error, so the
// key counts as failed and runs again only with --retry-failed, after a
// person has looked. alive says whether the door found its process
// running. Errors: those of FinishExecution; InvalidInput for an empty
// id or reason; InvalidTransition for an execution whose process still
// runs.
func AbandonExecution(ctx context.Context, env *Env, req RepairRequest, alive bool) (*RepairResult, error) {
	const op = "doctor repair abandon-execution"
	if err := checkRepair(op, req); err != nil {
		return nil, err
	}
	if alive {
		return nil, fault.New(fault.InvalidTransition, "%s: execution %s is still running in its process", op, req.ID).
			With("execution_id", req.ID).WithHint("awr exec show %s", req.ID)
	}
	res, err := FinishExecution(ctx, env, events.ExecutionFinished{ExecutionID: req.ID, ExitCode: -1, Error: "abandoned by awr doctor: " + req.Reason})
	if err != nil {
		return nil, err
	}
	return &RepairResult{Repair: RepairAbandonExecution, ID: req.ID, Kind: string(events.KindExecutionFinished), Seq: res.Execution.FinishedSeq, Reason: req.Reason, ProjectRevision: res.ProjectRevision}, nil
}
