package commands

import (
	"context"
	"encoding/hex"
	"encoding/json"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"zombiezen.com/go/sqlite"
)

// ForkRequest is `awr fork` and awr_fork.
type ForkRequest struct {
	Accept bool   `name:"accept" json:"accept,omitempty" help:"Fork the replica: append project_forked, after which it accepts writes. Without it, only say what would happen."`
	Reason string `name:"reason" json:"reason,omitempty" help:"Why the copy is forked (recorded in the log)." placeholder:"TEXT"`
	Agent  string `name:"agent" json:"agent,omitempty" help:"Who forks (recorded); the login name when empty." placeholder:"NAME"`
}

// ForkView is where a fork began: its project_forked event (seq, hash,
// time) and the origin it forked from, as `awr status --json` shows it.
type ForkView struct {
	// ProjectID is the fork's own project id (the origin's is in Origin).
	ProjectID string        `json:"project_id"`
	Seq       int64         `json:"seq"`
	Hash      string        `json:"hash"`
	At        int64         `json:"at"`
	Origin    events.Origin `json:"origin"`
}

// ForkResult is `awr fork`: whether the project is a replica, its origin,
// its fork (made now with accept, or earlier), and, for a preview, what
// --accept would append.
type ForkResult struct {
	// Accepted is true when this call appended project_forked.
	Accepted bool `json:"accepted"`
	// Replica is true while the project is an imported copy that refuses
	// writes.
	Replica bool           `json:"replica"`
	Origin  *events.Origin `json:"origin,omitempty"`
	Fork    *ForkView      `json:"fork,omitempty"`
	// Reason and By are what the fork recorded: why, and who forked.
	Reason string `json:"reason,omitempty"`
	By     string `json:"by,omitempty"`
	// WouldAppend is, in a preview of a replica, the event --accept
	// appends and its seq.
	WouldAppend *PlannedEvent `json:"would_append,omitempty"`
	// ProjectRevision is the revision the answer reflects.
	ProjectRevision int64  `json:"project_revision"`
	Next            string `json:"next,omitempty"`
}

// PlannedEvent is an event a preview would append.
type PlannedEvent struct {
	Kind events.Kind `json:"kind"`
	Seq  int64       `json:"seq"`
}

// ForkViewOf returns the fork view of a project_forked event e.
func ForkViewOf(e *events.Event) (*ForkView, error) {
	var pl events.ProjectForked
	if err := json.Unmarshal(e.Payload, &pl); err != nil {
		return nil, fault.Wrap(fault.Storage, err, "read fork: seq %d", e.Seq)
	}
	return &ForkView{ProjectID: pl.ProjectID, Seq: e.Seq, Hash: hex.EncodeToString(e.Hash), At: e.OccurredAt,
		Origin: events.Origin{ProjectID: pl.OriginProjectID, HeadSeq: pl.OriginHeadSeq, HeadHash: pl.OriginHeadHash, ImportedAt: pl.ImportedAt}}, nil
}

// ReplicaState reads, on conn, the log's origin and its latest fork: the
// fork of this copy (after the origin's head) when it was forked, else the
// latest fork in the history it holds (a copy of a fork). replica is true
// while the copy refuses writes: it has an origin and no fork after the
// origin's head.
func ReplicaState(conn *sqlite.Conn) (origin *events.Origin, fork *ForkView, replica bool, err error) {
	origin, err = events.ReadOrigin(conn)
	if err != nil {
		return nil, nil, false, err
	}
	ev, err := events.LatestFork(conn)
	if err != nil {
		return nil, nil, false, err
	}
	if ev != nil {
		if fork, err = ForkViewOf(ev); err != nil {
			return nil, nil, false, err
		}
	}
	return origin, fork, IsReplica(origin, fork), nil
}

// IsReplica reports whether a project with origin and latest fork refuses
// writes: it was imported and not forked since.
func IsReplica(origin *events.Origin, fork *ForkView) bool {
	return origin != nil && (fork == nil || fork.Seq <= origin.HeadSeq)
}

// Fork previews or, with req.Accept, makes the fork of an imported
// replica: one project_forked event on stream "project" giving the fork a
// project id of its own (a new one: a fork never keeps its origin's id, so
// the origin's anchors after the copy can never be taken for the fork's)
// and naming the origin (its project id, its head when imported), the
// reason and who forked; from then on the copy accepts writes. A preview
// writes nothing.
// Errors: InvalidTransition with Accept for a project that is not a
// replica (never imported, or forked already: the fork is named);
// VerifyFailed when the origin recorded beside the log is not the log's
// own (another project id, or not its head: the record was altered);
// RuleViolation for a reason that holds a secret.
func Fork(ctx context.Context, env *Env, req ForkRequest) (*ForkResult, error) {
	const op = "fork"
	if !req.Accept {
		res := &ForkResult{}
		err := env.Store.Read(ctx, func(r *events.Reader) error {
			var err error
			res.ProjectRevision = r.Head
			res.Origin, res.Fork, res.Replica, err = ReplicaState(r.Conn)
			if res.Replica {
				res.WouldAppend = &PlannedEvent{Kind: events.KindProjectForked, Seq: r.Head + 1}
				res.Next = "awr fork --accept"
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		return res, nil
	}
	if err := refuseSecrets(op, [2]string{"reason", req.Reason}); err != nil {
		return nil, err
	}
	if env.batch != nil {
		return nil, fault.New(fault.Internal, "fork: a fork does not run in a batch")
	}
	actor := req.Agent
	if actor == "" {
		actor = "awr fork"
	}
	opts := events.WriteOptions{Now: env.Now().UTC(), Entropy: env.Entropy, Actor: actor, Fork: true}
	w, err := env.Store.Write(ctx, opts, func(tx *events.Tx) (any, error) {
		origin, fork, replica, err := ReplicaState(tx.Conn)
		if err != nil {
			return nil, err
		}
		switch {
		case origin == nil:
			return nil, fault.New(fault.InvalidTransition, "fork: this project is not an imported replica; it accepts writes already").WithHint("awr status")
		case !replica:
			return nil, fault.New(fault.InvalidTransition, "fork: this replica of project %s was already forked at seq %d", origin.ProjectID, fork.Seq).
				With("fork", fork).WithHint("awr log --kind project_forked")
		}
		lineage, err := events.ReadLineage(tx.Conn)
		if err != nil {
			return nil, err
		}
		if err := originIsHead(tx, origin, lineage); err != nil {
			return nil, err
		}
		id := tx.NewID()
		for lineage.Holds(id) {
			id = tx.NewID()
		}
		e, err := tx.Append(events.NewEvent{Stream: "project", Payload: events.ProjectForked{
			ProjectID: id, OriginProjectID: origin.ProjectID, OriginHeadSeq: origin.HeadSeq, OriginHeadHash: origin.HeadHash,
			ImportedAt: origin.ImportedAt, Reason: req.Reason, By: actor,
		}})
		if err != nil {
			return nil, err
		}
		view, err := ForkViewOf(e)
		if err != nil {
			return nil, err
		}
		return &ForkResult{Accepted: true, Origin: origin, Fork: view, Reason: req.Reason, By: actor, ProjectRevision: tx.Head(), Next: "awr status"}, nil
	})
	if err != nil {
		return nil, err
	}
	out := new(ForkResult)
	if err := json.Unmarshal(w.Result, out); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "decode command result")
	}
	return out, nil
}

// originIsHead refuses a fork of a replica whose recorded origin is not
// its own log's head: the project the log is (lineage) at the seq and
// hash of its head. A replica refuses every write until it is forked, so
// anything else means the record beside the log was altered, and a fork
// would bless it.
func originIsHead(tx *events.Tx, o *events.Origin, l *events.Lineage) error {
	var head string
	if err := events.ScanEvents(tx.Conn, tx.Head(), tx.Head(), func(e *events.Event) error {
		head = hex.EncodeToString(e.Hash)
		return nil
	}); err != nil {
		return err
	}
	if o.ProjectID == l.Current() && o.HeadSeq == tx.Head() && o.HeadHash == head {
		return nil
	}
	return fault.New(fault.VerifyFailed, "fork: the origin recorded beside the log (project %s, seq %d, hash %.12s) is not this log's head (project %s, seq %d, hash %.12s): the record was altered; nothing was written",
		o.ProjectID, o.HeadSeq, o.HeadHash, l.Current(), tx.Head(), head).
		With("origin", *o).With("project_revision", tx.Head()).WithHint("awr verify")
}
