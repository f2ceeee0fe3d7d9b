package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
)

// CheckpointRequest records what an agent did and will do next.
type CheckpointRequest struct {
	SessionID   string   `name:"session" required:"" json:"session" help:"Session id." placeholder:"ID"`
	Agent       string   `name:"agent" required:"" json:"agent" help:"Who records it (a label)." placeholder:"LABEL"`
	ContextHash string   `name:"context-hash" json:"context_hash,omitempty" help:"Hash of the context packet the work was based on (from context compile)." placeholder:"H"`
	Digest      string   `name:"digest" required:"" json:"digest" help:"What was actually done (never a claim that tests passed unless they ran)." placeholder:"TEXT"`
	NextAction  string   `name:"next-action" required:"" json:"next_action" help:"The exact next action." placeholder:"TEXT"`
	OpenLoops   []string `name:"open-loop" sep:"none" json:"open_loops,omitempty" help:"An open loop: an unfinished thread a successor must know (repeatable)." placeholder:"TEXT"`
	WriteMeta
}

// CheckpointResult is the recorded checkpoint.
type CheckpointResult struct {
	Replay
	Checkpoint      projections.Checkpoint `json:"checkpoint"`
	ProjectRevision int64                  `json:"project_revision"`
}

// RecordCheckpoint appends checkpoint_recorded to an active session. The
// revision check is scoped to the session's own stream, so other agents'
// work never conflicts with it. context_hash_verified is true only when
// that hash was compiled for this session.
// Errors: InvalidInput for an empty digest or next action; NotFound and
// InvalidTransition for a missing or ended session; ClaimConflict when the
// session's lease was superseded.
func RecordCheckpoint(ctx context.Context, env *Env, req CheckpointRequest) (*CheckpointResult, error) {
	for _, f := range [][2]string{{"session", req.SessionID}, {"agent", req.Agent}, {"digest", req.Digest}, {"next_action", req.NextAction}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	fields := [][2]string{{"agent", req.Agent}, {"digest", req.Digest}, {"next_action", req.NextAction}}
	for i, l := range req.OpenLoops {
		fields = append(fields, [2]string{fmt.Sprintf("open_loops[%d]", i), l})
	}
	if err := refuseSecrets("checkpoint", fields...); err != nil {
		return nil, err
	}
	var loops []string
	for _, l := range req.OpenLoops {
		if strings.TrimSpace(l) == "" {
			return nil, fault.New(fault.InvalidInput, "checkpoint: an --open-loop is empty").With("field", "open_loops")
		}
		loops = append(loops, l)
	}
	return write(ctx, env, req.Agent, req.WriteMeta, []string{"session/" + req.SessionID}, req, func(tx *events.Tx) (*CheckpointResult, error) {
		s, err := activeSession(tx, "checkpoint", req.SessionID)
		if err != nil {
			return nil, err
		}
		if err := fence(tx, "checkpoint", s); err != nil {
			return nil, err
		}
		if err := renewHeld(tx, s); err != nil {
			return nil, err
		}
		verified := false
		if req.ContextHash != "" {
			seq, err := projections.ContextCompiledFor(tx.Conn, s.ID, req.ContextHash, tx.Head())
			if err != nil {
				return nil, err
			}
			verified = seq > 0
		}
		id := tx.NewID()
		e, err := tx.Append(events.NewEvent{Stream: "session/" + s.ID, ID: id, Payload: events.CheckpointRecorded{
			CheckpointID: id, SessionID: s.ID, Work: s.Work, Agent: req.Agent, ContextHash: req.ContextHash,
			ContextHashVerified: verified, Digest: req.Digest, NextAction: req.NextAction, OpenLoops: loops,
		}})
		if err != nil {
			return nil, err
		}
		cp, err := projections.CheckpointAt(tx.Conn, id, e.Seq)
		if err != nil {
			return nil, err
		}
		return &CheckpointResult{Checkpoint: *cp, ProjectRevision: tx.Head()}, nil
	})
}

// ContextRecordRequest records a compiled context packet for a session.
type ContextRecordRequest struct {
	SessionID     string `json:"session_id"`
	ContextHash   string `json:"context_hash"`
	TokenEstimate int    `json:"token_estimate"`
	TokenBudget   int    `json:"token_budget"`
	Complete      bool   `json:"complete"`
	WriteMeta
}

// ContextRecordResult reports the context_compiled event.
type ContextRecordResult struct {
	Replay
	Seq             int64 `json:"seq"`
	ProjectRevision int64 `json:"project_revision"`
}

// RecordContext appends context_compiled for an active session with the
// hash and sizes it is given, without compiling anything. It is for
// generated histories (bench generate) and tests; the operations compile
// and record a packet in one transaction with CompileContext and
// ResumeWithContext.
func RecordContext(ctx context.Context, env *Env, req ContextRecordRequest) (*ContextRecordResult, error) {
	for _, f := range [][2]string{{"session", req.SessionID}, {"context_hash", req.ContextHash}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	return write(ctx, env, "awr", req.WriteMeta, []string{"session/" + req.SessionID}, req, func(tx *events.Tx) (*ContextRecordResult, error) {
		s, err := activeSession(tx, "record context", req.SessionID)
		if err != nil {
			return nil, err
		}
		e, err := tx.Append(events.NewEvent{Stream: "session/" + s.ID, Payload: events.ContextCompiled{
			SessionID: s.ID, Work: s.Work, ContextHash: req.ContextHash, TokenEstimate: req.TokenEstimate,
			TokenBudget: req.TokenBudget, Complete: req.Complete,
		}})
		if err != nil {
			return nil, err
		}
		return &ContextRecordResult{Seq: e.Seq, ProjectRevision: tx.Head()}, nil
	})
}
