package commands

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/secret"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/oklog/ulid/v2"
)

// Env is what every command needs: the store, the clock, the entropy for
// ids and the project's policy. Tests pass a fixed clock and a seeded
// reader. An Env that Batch hands to its function also carries the
// batch's shared transaction.
type Env struct {
	Store   *events.Store
	Now     func() time.Time
	Entropy io.Reader
	// Policy is the project's continuity settings (the manifest's
	// [continuity] table); NewEnv sets DefaultPolicy, and the zero Policy
	// (an Env built as a literal) stands for it too (see Env.policy).
	Policy Policy
	// batch is set on the Env of a Batch: its commands join its
	// transaction instead of opening their own.
	batch *batch
}

// NewEnv returns an Env on the real clock, a monotonic ULID entropy
// source seeded from crypto/rand and DefaultPolicy.
func NewEnv(store *events.Store) *Env {
	return &Env{Store: store, Now: time.Now, Entropy: &lockedEntropy{src: ulid.Monotonic(rand.Reader, 0)}, Policy: DefaultPolicy()}
}

// Policy is what a project decides about continuity, read from its
// manifest's [continuity] table by the project door.
type Policy struct {
	// ClaimTTLms is the lease, in milliseconds, of a claim taken or
	// renewed without --ttl-ms; 0 means claims never expire, and only
	// then may a request ask for a claim without expiry.
	ClaimTTLms int64
	// OpenLoopCap bounds the open loops a checkpoint carries forward.
	OpenLoopCap int
	// EvidenceLevel is the weakest evidence level (observed, reported,
	// note) that carries an acceptance criterion to completion.
	EvidenceLevel string
}

// The defaults of a project whose manifest has no [continuity] table.
const (
	// DefaultClaimTTLms is the lease of a claim when the manifest names
	// none: one hour.
	DefaultClaimTTLms int64 = 3600000
	// DefaultOpenLoopCap is the open-loop cap when the manifest names none.
	DefaultOpenLoopCap = 20
	// DefaultEvidenceLevel is the evidence level completion requires when
	// the manifest names none: a result awr observed or one reported.
	DefaultEvidenceLevel = events.LevelReported
	// MaxTTLms is the longest lease a claim may have: 30 days. It bounds
	// --ttl-ms and the manifest's claim_ttl_ms, so an expiry never
	// overflows.
	MaxTTLms int64 = 30 * 24 * 3600 * 1000
)

// DefaultPolicy returns the policy of a project whose manifest says
// nothing: a one-hour lease and 20 open loops.
func DefaultPolicy() Policy {
	return Policy{ClaimTTLms: DefaultClaimTTLms, OpenLoopCap: DefaultOpenLoopCap, EvidenceLevel: DefaultEvidenceLevel}
}

// policy returns the policy commands apply: env.Policy, or DefaultPolicy
// for the zero Policy, which no manifest gives (open_loop_cap is at least
// 1), so that an Env built without one never hands out claims that do not
// expire. An OpenLoopCap below 1 is DefaultOpenLoopCap.
func (env *Env) policy() Policy {
	p := env.Policy
	if p == (Policy{}) {
		return DefaultPolicy()
	}
	if p.OpenLoopCap < 1 {
		p.OpenLoopCap = DefaultOpenLoopCap
	}
	if p.EvidenceLevel == "" {
		p.EvidenceLevel = DefaultEvidenceLevel
	}
	return p
}

type lockedEntropy struct {
	mu  sync.Mutex
	src io.Reader
}

// Read serializes reads of the wrapped entropy source.
func (l *lockedEntropy) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src.Read(p)
}

// WriteMeta carries what every write request may say about concurrency and
// retries.
type WriteMeta struct {
	// ExpectedRevision is the project_revision the caller's decision was
	// based on; nil skips the check.
	ExpectedRevision *int64 `name:"expected-revision" aliases:"expected-project-revision" json:"expected_revision,omitempty" help:"Fail with RevisionConflict if what this write depends on changed after revision R." placeholder:"R"`
	// RequestID makes the write idempotent.
	RequestID string `name:"request-id" json:"request_id,omitempty" help:"Make a retried write idempotent: the same id returns the first answer and appends nothing." placeholder:"ID"`
}

// write runs fn as one command: one transaction, scoped revision check,
// idempotency, and the result decoded from the stored JSON so a retried
// request gets exactly the first answer.
func write[T any](ctx context.Context, env *Env, actor string, meta WriteMeta, streams []string, request any, fn func(tx *events.Tx) (*T, error)) (*T, error) {
	if b := env.batch; b != nil {
		if b.tx == nil {
			return nil, fault.New(fault.Internal, "batch: a command ran on the Env of a batch that has ended")
		}
		prev := b.tx.SetActor(actor)
		defer b.tx.SetActor(prev)
		return fn(b.tx)
	}
	if meta.ExpectedRevision != nil {
		if err := RevisionOf("", "--expected-revision", *meta.ExpectedRevision); err != nil {
			return nil, err
		}
	}
	opts := events.WriteOptions{
		Now:              env.Now().UTC(),
		Entropy:          env.Entropy,
		Actor:            actor,
		ExpectedRevision: meta.ExpectedRevision,
		Streams:          streams,
		RequestID:        meta.RequestID,
	}
	if meta.RequestID != "" {
		opts.Fingerprint = events.Fingerprint(request)
	}
	res, err := env.Store.Write(ctx, opts, func(tx *events.Tx) (any, error) { return fn(tx) })
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := json.Unmarshal(res.Result, out); err != nil {
		return nil, fault.Wrap(fault.Internal, err, "decode command result")
	}
	if res.Replayed {
		if s, ok := any(out).(interface{ markReplayed(rev int64) }); ok {
			s.markReplayed(res.Revision)
		}
	}
	return out, nil
}

// Replay marks a result that answers a repeated request id.
type Replay struct {
	// Replayed is true when this result answers a repeated request id and
	// nothing new was written.
	Replayed bool `json:"replayed,omitempty"`
}

func (r *Replay) markReplayed(int64) { r.Replayed = true }

func required(field, value string) error {
	if strings.TrimSpace(value) == "" {
		return fault.New(fault.InvalidInput, "%s is required", field).With("field", field)
	}
	return nil
}

// batch is the shared transaction of a Batch; tx is nil once it has ended.
type batch struct {
	tx *events.Tx
}

// Batch runs fn with a batch Env: every command called with that Env joins
// one shared transaction, so all of their events commit together, or none
// do. It is for bulk work (generating benchmark histories, scripted
// imports) that must go through the same command code as the CLI without
// paying one commit per command. Inside a batch, expected revisions and
// request ids are not checked, every event carries the batch's clock
// reading (env.Now when Batch began), and a command that fails leaves the
// events it appended before failing in the batch (commands decide before
// they append). The batch Env must not be used after Batch returns; a
// command called with it then fails with Internal.
//
// Errors: Internal when env is itself a batch Env; any error fn returns
// (nothing is committed); those of events.Store.Write.
func Batch(ctx context.Context, env *Env, actor string, fn func(batch *Env) error) (int64, error) {
	if env.batch != nil {
		return 0, fault.New(fault.Internal, "batch: batches do not nest")
	}
	res, err := env.Store.Write(ctx, events.WriteOptions{Now: env.Now().UTC(), Entropy: env.Entropy, Actor: actor, Bulk: true}, func(tx *events.Tx) (any, error) {
		b := &Env{Store: env.Store, Now: env.Now, Entropy: env.Entropy, Policy: env.Policy, batch: &batch{tx: tx}}
		defer func() { b.batch.tx = nil }()
		return nil, fn(b)
	})
	if err != nil {
		return 0, err
	}
	return res.Revision, nil
}

// Head returns the project_revision reached so far inside the batch of a
// batch Env, and false for an Env outside a batch (or after it ended).
func (env *Env) Head() (int64, bool) {
	if env.batch == nil || env.batch.tx == nil {
		return 0, false
	}
	return env.batch.tx.Head(), true
}

// RefuseSecrets is refuseSecrets for the layers above commands (a text
// that reaches the log through them, such as a rig's stop message).
func RefuseSecrets(op string, fields ...[2]string) error { return refuseSecrets(op, fields...) }

// refuseSecrets fails with RuleViolation when a field holds what looks like
// a credential. The log is immutable, so a secret written into it could
// never be removed; the error names the field and the kind of secret and
// never echoes it.
func refuseSecrets(op string, fields ...[2]string) error {
	for _, f := range fields {
		if err := checkField(op, f[0], f[1]); err != nil {
			return err
		}
		if found, ok := secret.Find(f[1]); ok {
			return fault.New(fault.RuleViolation, "%s: %s holds what looks like a %s; secrets never enter the log: remove it from %s and retry", op, f[0], found.Kind, f[0]).
				With("field", f[0]).With("kind", found.Kind)
		}
	}
	return nil
}

// Bounds of what a request may record: a label (who, with which provider
// and model, from which host) is one short line; a text (a digest, a next
// action, a loop) may be long, but not unbounded.
const (
	MaxLabelBytes = 200
	MaxTextBytes  = 64 << 10
)

// MaxBudget bounds the token budget of a context packet: far above any
// host's context window, so a budget beyond it is a typo.
const MaxBudget = 1_000_000

// BudgetOf returns the token budget a request asks for (the default,
// workcontext.DefaultBudget, when it names none). One check for every
// operation that compiles a packet, on the CLI and MCP alike.
// Errors: InvalidInput naming --budget for a budget below 1 or above
// MaxBudget (0 is not "the default": leave the flag out for that).
func BudgetOf(op string, b *int) (int, error) {
	if b == nil {
		return workcontext.DefaultBudget, nil
	}
	if *b < 1 || *b > MaxBudget {
		return 0, fault.New(fault.InvalidInput, "%s: --budget %d: a token budget is 1 to %d (leave it out for the default, %d)", op, *b, MaxBudget, workcontext.DefaultBudget).
			With("flag", "--budget").With("min", 1).With("max", MaxBudget)
	}
	return *b, nil
}

// MaxLimit bounds every count a read takes as a page size (--limit of
// search and ready, and their MCP fields), as MaxLabelBytes bounds a
// label.
const MaxLimit = 200

// DefaultPage is the page a listing read returns when it is not given a
// --limit (ready, status's queues and lapsed sessions, a goal's work):
// the answer counts the rest (a *_total field) and gives the cursor
// (next_cursor, for --cursor) of the next page; --all asks for
// everything.
const DefaultPage = 50

// LimitOf returns the page size a read asks for: def when n is nil (the
// flag left out), else *n, which must be 1 to MaxLimit. One check for
// every such flag, on the CLI and MCP alike.
// Errors: InvalidInput naming op and flag (details flag, min, max) for a
// limit below 1 or above MaxLimit; 0 is not "the default" nor "all".
func LimitOf(op, flag string, n *int, def int) (int, error) {
	if n == nil {
		return def, nil
	}
	if *n < 1 || *n > MaxLimit {
		return 0, fault.New(fault.InvalidInput, "%s: %s %d: a limit is 1 to %d (leave it out for the default)", op, flag, *n, MaxLimit).
			With("flag", flag).With("min", 1).With("max", MaxLimit)
	}
	return *n, nil
}

// RevisionOf checks a revision flag (--at, --since, --until,
// --expected-revision): 0 or more. One check for every operation that
// takes a revision, on the CLI and MCP alike (reads check --at in
// Read.Resolve, writes --expected-revision in every write).
// Errors: InvalidInput naming the flag for a negative revision.
func RevisionOf(op, flag string, rev int64) error {
	if rev < 0 {
		msg := fmt.Sprintf("%s %d: a revision is 0 or more", flag, rev)
		if op != "" {
			msg = op + ": " + msg
		}
		return fault.New(fault.InvalidInput, "%s", msg).With("flag", flag).With("min", 0).WithHint("awr status")
	}
	return nil
}

// labelFields are the fields that name someone or something.
var labelFields = map[string]bool{"agent": true, "provider": true, "model": true, "client": true, "external_session": true}

// checkField bounds one recorded field: a label at MaxLabelBytes with no
// control character, any text at MaxTextBytes with no NUL. One check for
// every field of every command, so the CLI and MCP refuse alike.
// Errors: InvalidInput naming the field and the bound.
func checkField(op, field, v string) error {
	if labelFields[field] {
		if len(v) > MaxLabelBytes {
			return fault.New(fault.InvalidInput, "%s: %s is %d bytes, more than the %d a label may have", op, field, len(v), MaxLabelBytes).
				With("field", field).With("max", MaxLabelBytes)
		}
		for _, r := range v {
			if r < 0x20 || r == 0x7f {
				return fault.New(fault.InvalidInput, "%s: %s holds a control character (%q); a label is one plain line", op, field, r).With("field", field)
			}
		}
		return nil
	}
	if len(v) > MaxTextBytes {
		return fault.New(fault.InvalidInput, "%s: %s is %d bytes, more than the %d a text may have", op, field, len(v), MaxTextBytes).
			With("field", field).With("max", MaxTextBytes)
	}
	if strings.ContainsRune(v, 0) {
		return fault.New(fault.InvalidInput, "%s: %s holds a NUL character", op, field).With("field", field)
	}
	return nil
}
