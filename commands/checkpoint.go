package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/projections"
)

// CheckpointRequest records what an agent did and will do next, and what
// it changed in the work item's loops, decisions, facts and hypotheses.
type CheckpointRequest struct {
	SessionID   string `name:"session" required:"" json:"session" help:"Session id." placeholder:"ID"`
	Agent       string `name:"agent" required:"" json:"agent" help:"Who records it (a label)." placeholder:"LABEL"`
	ContextHash string `name:"context-hash" json:"context_hash,omitempty" help:"Hash of the context packet the work was based on (from context compile)." placeholder:"H"`
	Digest      string `name:"digest" required:"" json:"digest" help:"What was actually done (never a claim that tests passed unless they ran)." placeholder:"TEXT"`
	NextAction  string `name:"next-action" required:"" json:"next_action" help:"The exact next action." placeholder:"TEXT"`
	KnowledgeFlags
	// Stale lists the sources the door found changed since they were
	// indexed: a context hash does not verify on them. No front end sets
	// it.
	Stale []string `kong:"-" json:"-"`
	// Repo is the session's repository as the door captured it, with the
	// files changed since the chain's previous checkpoint. No front end
	// sets it.
	Repo *events.RepoRecord `kong:"-" json:"-"`
	WriteMeta
}

// Warning is something a command did that its caller must know, though it
// is not an error.
type Warning struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// WarnOpenLoopsOverCap is the warning code of a work item with more open
// loops than the manifest's cap.
const WarnOpenLoopsOverCap = "open_loops_over_cap"

// CheckpointResult is the recorded checkpoint and the work item's
// knowledge after it: what is in force and what it closed.
// RecordCheckpoint gives every item in force; the project's door answers
// a front end with what the checkpoint changed whole (its changes, the
// items it closed) and a page of the items in force: KnowledgeTotal
// counts every one and, when more follow, KnowledgeNextCursor is the
// --knowledge-cursor of `awr session show` that lists the next page,
// KnowledgeNextCommand that whole command.
type CheckpointResult struct {
	Replay
	Checkpoint           projections.Checkpoint      `json:"checkpoint"`
	Knowledge            *projections.KnowledgeState `json:"knowledge"`
	KnowledgeTotal       int                         `json:"knowledge_total"`
	KnowledgeNextCursor  string                      `json:"knowledge_next_cursor,omitempty"`
	KnowledgeNextCommand string                      `json:"knowledge_next_command,omitempty"`
	Warnings             []Warning                   `json:"warnings"`
	ProjectRevision      int64                       `json:"project_revision"`
}

// KnowledgeNext is where `awr session show` of session lists the items
// in force after the place last: its --knowledge-cursor, and that whole
// command (at is " --at REV" to read at a revision, "" at the head).
func KnowledgeNext(session string, last projections.KnowledgePlace, at string) (next, command string) {
	next = cursor.EncodeKnowledge(last)
	return next, "awr session show " + shellwords.Quote(session) + " --knowledge-cursor " + next + at
}

// RecordCheckpoint appends checkpoint_recorded to an active session. The
// revision check is scoped to the session's own stream, so other agents'
// work never conflicts with it. Loops, decisions, facts and hypotheses the
// request does not mention stay as they were. context_hash_verified is
// true only when that hash was compiled for this session while it held
// the work, from fresh sources, and the work item has not changed in its
// source since; otherwise context_hash_note says why not.
// Errors: InvalidInput for an empty digest, next action or knowledge text;
// NotFound and InvalidTransition for a missing or ended session, and for a
// knowledge id unknown or already closed (see planKnowledge); ClaimConflict
// when the session's lease was superseded. Nothing is written on error.
func RecordCheckpoint(ctx context.Context, env *Env, req CheckpointRequest) (*CheckpointResult, error) {
	for _, f := range [][2]string{{"session", req.SessionID}, {"agent", req.Agent}, {"digest", req.Digest}, {"next_action", req.NextAction}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	fields := append([][2]string{{"agent", req.Agent}, {"digest", req.Digest}, {"next_action", req.NextAction}}, req.KnowledgeFlags.texts()...)
	if err := checkpointTotal(fields[1:]); err != nil { // the texts, not the agent label
		return nil, err
	}
	if err := refuseSecrets("checkpoint", fields...); err != nil {
		return nil, err
	}
	loopCap := env.policy().OpenLoopCap
	return sessionWrite(ctx, env, req.Agent, "checkpoint", req.SessionID, req.WriteMeta, req, func(tx *events.Tx) (*CheckpointResult, error) {
		s, err := activeSession(tx, "checkpoint", req.SessionID)
		if err != nil {
			return nil, err
		}
		held, top, err := fenced(tx, "checkpoint", s)
		if err != nil {
			return nil, err
		}
		if req.ContextHash != "" && !isContextHash(req.ContextHash) {
			return nil, fault.New(fault.InvalidInput, "checkpoint: --context-hash %q is not a context hash (sha256: and 64 lowercase hex digits, as context compile prints it)", req.ContextHash).
				With("flag", "--context-hash").WithHint("awr context compile --work %s --session %s", s.Work, s.ID)
		}
		if err := renewFenced(tx, s, held, top); err != nil {
			return nil, err
		}
		changes, err := planKnowledge(tx, s.Work, req.KnowledgeFlags)
		if err != nil {
			return nil, err
		}
		verified, note := false, ""
		if req.ContextHash != "" {
			if verified, note, err = verifyContextHash(tx, s, req.ContextHash, req.Stale); err != nil {
				return nil, err
			}
		}
		id := tx.NewID()
		pl := events.CheckpointRecorded{
			CheckpointID: id, SessionID: s.ID, Work: s.Work, Agent: req.Agent, ContextHash: req.ContextHash,
			ContextHashVerified: verified, ContextHashNote: note, Digest: req.Digest, NextAction: req.NextAction, Changes: changes, Repo: req.Repo,
		}
		e, err := tx.Append(events.NewEvent{Stream: "session/" + s.ID, ID: id, Payload: pl})
		if err != nil {
			return nil, err
		}
		cp, err := appendedCheckpoint(e, pl)
		if err != nil {
			return nil, err
		}
		k, err := projections.KnowledgeStateAt(tx.Conn, s.Work, e.Seq, e.Seq-1)
		if err != nil {
			return nil, err
		}
		if err := requiredTotal(s.Work, req.Digest, req.NextAction, k); err != nil {
			return nil, err // the transaction rolls back: nothing is written
		}
		out := &CheckpointResult{Checkpoint: *cp, Knowledge: k, KnowledgeTotal: k.InForce(), Warnings: []Warning{}, ProjectRevision: tx.Head()}
		if w := LoopCapWarning(s.Work, len(k.OpenLoops), loopCap); w != nil {
			out.Warnings = append(out.Warnings, *w)
		}
		return out, nil
	})
}

// MaxCheckpointBytes bounds all the texts of one checkpoint together (its
// digest, next action and every loop, decision, fact, hypothesis and
// reason it records), as MaxTextBytes bounds each. At one token per byte
// (o200k_base rarely reaches it) and three for a control character the
// packet escapes, a checkpoint at the cap is at most 786,432 tokens, so
// the packet of its work item compiles within MaxBudget: no checkpoint
// leaves a work item whose packet fails BudgetExceeded at every budget.
const MaxCheckpointBytes = 256 << 10

// checkpointTotal refuses a checkpoint whose texts (fields: name and
// text) together exceed MaxCheckpointBytes.
// Errors: InvalidInput (details field, max) for one text over
// MaxTextBytes (checkField); InvalidInput (details bytes, max) with the
// hint to read the limit in the command's help for the total.
func checkpointTotal(fields [][2]string) error {
	total := 0
	for _, f := range fields {
		// A text over its own bound is named as such.
		if err := checkField("checkpoint", f[0], f[1]); err != nil {
			return err
		}
		total += len(f[1])
	}
	if total <= MaxCheckpointBytes {
		return nil
	}
	return fault.New(fault.InvalidInput, "checkpoint: its texts (digest, next action, loops, decisions, facts, hypotheses and reasons) are %d bytes together, more than the %d one checkpoint may record; record the rest in a second checkpoint", total, MaxCheckpointBytes).
		With("bytes", total).With("max", MaxCheckpointBytes).WithHint("awr session checkpoint --help")
}

// requiredTotal refuses a checkpoint after which what the packet of work
// must carry whole (the digest and next action, every open loop and
// every decision in force, over all the checkpoints that opened them)
// would exceed MaxCheckpointBytes: one checkpoint is bounded by
// checkpointTotal, but many at the cap would leave a work item whose
// packet fails BudgetExceeded at every budget. Facts and hypotheses are
// not counted: a packet drops them when the budget is short.
// Errors: InvalidInput (details bytes, max, open_loops, decisions) with
// the hint that lists what can be closed.
func requiredTotal(work, digest, next string, k *projections.KnowledgeState) error {
	total := len(digest) + len(next)
	for _, l := range [][]projections.Knowledge{k.OpenLoops, k.Decisions} {
		for _, it := range l {
			total += len(it.Text)
		}
	}
	if total <= MaxCheckpointBytes {
		return nil
	}
	return fault.New(fault.InvalidInput, "checkpoint: with it, %s's digest, next action, %d open loops and %d decisions in force would be %d bytes, more than the %d its packet can always carry whole; resolve or drop the loops that died, or retract the decisions no longer in force, in this checkpoint", work, len(k.OpenLoops), len(k.Decisions), total, MaxCheckpointBytes).
		With("bytes", total).With("max", MaxCheckpointBytes).With("open_loops", len(k.OpenLoops)).With("decisions", len(k.Decisions)).
		WithHint("awr context hygiene --work %s", work)
}

// appendedCheckpoint is the checkpoint e records, as projections.CheckpointAt
// reads it back, built from pl, the payload e was encoded from, without
// reading it again; when the encoding holds U+FFFD (invalid UTF-8 that
// encoding/json replaced), from the stored bytes instead, which is what a
// read gives (TestRecordCheckpoint_ResultIsTheStoredCheckpoint compares
// the two).
func appendedCheckpoint(e *events.Event, pl events.CheckpointRecorded) (*projections.Checkpoint, error) {
	if strings.Contains(string(e.Payload), "\uFFFD") || strings.Contains(string(e.Payload), `\ufffd`) {
		v, err := events.Decode(e)
		if err != nil {
			return nil, err
		}
		pl = *v.(*events.CheckpointRecorded)
	}
	changes := pl.Changes
	if changes == nil {
		changes = []events.KnowledgeChange{}
	}
	return &projections.Checkpoint{
		ID: pl.CheckpointID, Seq: e.Seq, SessionID: pl.SessionID, Work: pl.Work, Agent: pl.Agent,
		ContextHash: pl.ContextHash, ContextHashVerified: pl.ContextHashVerified, Digest: pl.Digest,
		NextAction: pl.NextAction, ContextHashNote: pl.ContextHashNote, Changes: changes, OpenLoops: pl.OpenLoops, RecordedAt: e.OccurredAt, Repo: pl.Repo,
	}, nil
}

// LoopCapWarning is the open_loops_over_cap warning of a work item with
// more than limit open loops, or nil.
func LoopCapWarning(work string, open, limit int) *Warning {
	if limit < 1 || open <= limit {
		return nil
	}
	return &Warning{Code: WarnOpenLoopsOverCap, Message: fmt.Sprintf("%s has %d open loops, more than the cap of %d: resolve or drop the ones that died (awr context hygiene --work %s)", work, open, limit, work)}
}

// isContextHash reports whether h reads as a packet's hash: "sha256:"
// and 64 lowercase hex digits.
func isContextHash(h string) bool {
	hexPart, ok := strings.CutPrefix(h, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for _, r := range hexPart {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

// verifyContextHash decides whether a checkpoint's context hash is
// verified, and if not, why: the hash must have been compiled for session
// s while it held the live claim on its work, from sources that are still
// fresh, and the work item must not have changed in its source since.
func verifyContextHash(tx *events.Tx, s *projections.Session, hash string, stale []string) (bool, string, error) {
	seq, err := projections.ContextCompiledFor(tx.Conn, s.ID, hash, tx.Head())
	if err != nil {
		return false, "", err
	}
	if seq == 0 {
		return false, "the hash was never compiled for session " + s.ID, nil
	}
	var compiled *events.ContextCompiled
	if err := events.ScanEvents(tx.Conn, seq, seq, func(e *events.Event) error {
		v, err := events.Decode(e)
		if err != nil {
			return err
		}
		compiled, _ = v.(*events.ContextCompiled)
		return nil
	}); err != nil {
		return false, "", err
	}
	if compiled == nil || !compiled.Held {
		return false, fmt.Sprintf("compiled at seq %d while session %s held no live claim on %s", seq, s.ID, s.Work), nil
	}
	changed, err := projections.ItemChangedAfter(tx.Conn, s.Work, seq, tx.Head())
	if err != nil {
		return false, "", err
	}
	if changed > 0 {
		return false, fmt.Sprintf("%s changed in its source at seq %d, after the compile at seq %d", s.Work, changed, seq), nil
	}
	if len(stale) > 0 {
		return false, "sources changed since they were indexed: " + strings.Join(stale, ", "), nil
	}
	return true, "", nil
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
	return sessionWrite(ctx, env, "awr", "record context", req.SessionID, req.WriteMeta, req, func(tx *events.Tx) (*ContextRecordResult, error) {
		s, err := activeSession(tx, "record context", req.SessionID)
		if err != nil {
			return nil, err
		}
		held, err := holdsLive(tx, s.ID)
		if err != nil {
			return nil, err
		}
		e, err := tx.Append(events.NewEvent{Stream: "session/" + s.ID, Payload: events.ContextCompiled{
			SessionID: s.ID, Work: s.Work, ContextHash: req.ContextHash, TokenEstimate: req.TokenEstimate,
			TokenBudget: req.TokenBudget, Complete: req.Complete, Held: held,
		}})
		if err != nil {
			return nil, err
		}
		return &ContextRecordResult{Seq: e.Seq, ProjectRevision: tx.Head()}, nil
	})
}
