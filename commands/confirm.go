package commands

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// ConfirmKnowledgeRequest is `awr context confirm ITEM` and
// awr_context_confirm: someone checked a live loop, decision, fact or
// hypothesis against the evidence hygiene quoted, and it still holds.
type ConfirmKnowledgeRequest struct {
	ID    string `arg:"" name:"item" json:"item" help:"The loop, decision, fact or hypothesis that still holds (L-2, D-1, F-3, H-1)." placeholder:"ITEM"`
	Work  string `name:"work" required:"" json:"work" help:"The work item it belongs to." placeholder:"KEY"`
	Agent string `name:"agent" required:"" json:"agent" help:"Who checked it (a label)." placeholder:"LABEL"`
	Note  string `name:"note" json:"note,omitempty" help:"What you checked (recorded in the log)." placeholder:"TEXT"`
	// Head is the repository's HEAD as the door read it (empty when there
	// is none): commits it reaches are no longer evidence against the
	// item.
	Head string `kong:"-" json:"-"`
	WriteMeta
}

// ConfirmKnowledgeResult is the item confirmed and the event that
// recorded it.
type ConfirmKnowledgeResult struct {
	Replay
	Item *projections.Knowledge `json:"item"`
	// Seq is the knowledge_confirmed event's: hygiene no longer flags the
	// item for evidence the log held by it.
	Seq             int64  `json:"seq"`
	Note            string `json:"note,omitempty"`
	Head            string `json:"head,omitempty"`
	ProjectRevision int64  `json:"project_revision"`
}

// ConfirmKnowledge records that a live item of a work item still holds
// (knowledge_confirmed on stream knowledge/<work>). The item is not
// changed; `awr context hygiene` stops flagging it for the evidence the
// log held by then and for the commits req.Head reaches.
// Errors: InvalidInput for an empty id, work or agent; RuleViolation for
// a note that holds a secret; NotFound for an unknown work item or an id
// the work item never had; InvalidTransition for an item already closed
// (with the seq that closed it).
func ConfirmKnowledge(ctx context.Context, env *Env, req ConfirmKnowledgeRequest) (*ConfirmKnowledgeResult, error) {
	id := strings.ToUpper(strings.TrimSpace(req.ID))
	for _, f := range [][2]string{{"item", id}, {"work", req.Work}, {"agent", req.Agent}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if err := refuseSecrets("context confirm", [2]string{"agent", req.Agent}, [2]string{"note", req.Note}); err != nil {
		return nil, err
	}
	stream := events.KnowledgeStream(req.Work)
	return write(ctx, env, req.Agent, req.WriteMeta, []string{stream}, req, func(tx *events.Tx) (*ConfirmKnowledgeResult, error) {
		if err := KnownWork(tx.Conn, "context confirm", req.Work, tx.Head()); err != nil {
			return nil, err
		}
		items, err := projections.KnowledgeAt(tx.Conn, req.Work, tx.Head())
		if err != nil {
			return nil, err
		}
		var k *projections.Knowledge
		for i := range items {
			if items[i].ID == id {
				k = &items[i]
			}
		}
		if k == nil {
			return nil, fault.New(fault.NotFound, "context confirm: %s has no loop, decision, fact or hypothesis %s", req.Work, id).
				With("work", req.Work).With("id", id).WithHint("awr context hygiene --work %s", req.Work)
		}
		if !k.Live() {
			return nil, fault.New(fault.InvalidTransition, "context confirm: %s of %s was %s at seq %d: only a live item can still hold", id, req.Work, k.State, k.ClosedSeq).
				With("work", req.Work).With("id", id).With("state", k.State).With("closed_seq", k.ClosedSeq)
		}
		note := strings.TrimSpace(req.Note)
		e, err := tx.Append(events.NewEvent{Stream: stream, Payload: events.KnowledgeConfirmed{Work: req.Work, ItemID: id, Agent: req.Agent, Note: note, Head: req.Head}})
		if err != nil {
			return nil, err
		}
		return &ConfirmKnowledgeResult{Item: k, Seq: e.Seq, Note: note, Head: req.Head, ProjectRevision: tx.Head()}, nil
	})
}
