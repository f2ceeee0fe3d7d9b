package commands

import (
	"context"
	"fmt"
	"github.com/awr-dev/awr/internal/lazyre"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

var nameRE = lazyre.New(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// ParseAddress splits a seat address ROLE@RIG. Role and rig are lowercase
// letters, digits, '-' and '_', starting with a letter or digit, at most 40
// characters each.
func ParseAddress(address string) (role, rig string, err error) {
	role, rig, ok := strings.Cut(address, "@")
	if !ok || !nameRE.MatchString(role) || !nameRE.MatchString(rig) {
		return "", "", fault.New(fault.InvalidInput, "seat address %q is not ROLE@RIG (lowercase letters, digits, - and _)", address).
			With("address", address).WithHint("awr seat add ROLE@RIG --runtime generic --command 'my-agent {context_file}'")
	}
	return role, rig, nil
}

// CheckRigName validates a rig name.
func CheckRigName(rig string) error {
	if !nameRE.MatchString(rig) {
		return fault.New(fault.InvalidInput, "rig name %q is not lowercase letters, digits, - and _", rig).With("rig", rig)
	}
	return nil
}

// Placeholders are the names a seat's command templates may use.
var Placeholders = []string{"seat", "rig", "role", "session", "conversation", "context_file", "project", "work"}

var placeholderRE = lazyre.New(`\$?\{([a-z_]+)\}`)

// checkTemplate refuses placeholders awr does not know. Shell expansions
// (${name}) are left to the shell.
func checkTemplate(address, field, tmpl string) error {
	for _, m := range placeholderRE.FindAllStringSubmatch(tmpl, -1) {
		if strings.HasPrefix(m[0], "$") {
			continue
		}
		known := false
		for _, p := range Placeholders {
			known = known || p == m[1]
		}
		if !known {
			return fault.New(fault.InvalidInput, "seat %s: %s uses unknown placeholder {%s}; known: {%s} (docs/rigs.md), or ${NAME} for a shell variable", address, field, m[1], strings.Join(Placeholders, "}, {")).
				With("address", address).With("field", field).With("placeholder", m[1]).
				WithHint("awr seat add --help")
		}
	}
	return nil
}

// StorePlaceholders are the placeholders a conversation store may use.
var StorePlaceholders = []string{"conversation", "project", "home"}

// checkStore checks a seat's conversation store: runtime generic only
// (awr knows where claude and codex keep theirs), with {conversation} and
// no other placeholder than StorePlaceholders.
func checkStore(d *events.SeatDeclared) error {
	store := d.ConversationStore
	if store == "" {
		return nil
	}
	bad := func(format string, args ...any) error {
		return fault.New(fault.InvalidInput, "seat %s: --conversation-store %s", d.Address, fmt.Sprintf(format, args...)).
			With("address", d.Address).With("field", "conversation_store").
			WithHint("awr seat add %s --runtime generic --command %s --conversation-store '.agent/conversations/{conversation}.json'", d.Address, shellwords.Quote(d.Command))
	}
	if d.Runtime != events.RuntimeGeneric {
		return bad("is for runtime generic: awr knows where %s keeps its conversations", d.Runtime)
	}
	if !strings.Contains(store, "{conversation}") {
		return bad("%q does not name the conversation: it needs {conversation}", store)
	}
	for _, m := range placeholderRE.FindAllStringSubmatch(store, -1) {
		if !slices.Contains(StorePlaceholders, m[1]) || strings.HasPrefix(m[0], "$") {
			return bad("%q uses %s; a store may use only {%s}", store, m[0], strings.Join(StorePlaceholders, "}, {"))
		}
	}
	return nil
}

// SeatRequest declares or redeclares a seat.
type SeatRequest struct {
	Address       string `arg:"" name:"address" json:"address" help:"Seat address ROLE@RIG, e.g. build@portal." placeholder:"ROLE@RIG"`
	Runtime       string `name:"runtime" required:"" enum:"generic,claude,codex" json:"runtime" help:"How the agent is launched: generic (your templates), claude or codex (shipped templates)." placeholder:"RUNTIME"`
	Command       string `name:"command" json:"command,omitempty" help:"Start template; placeholders {seat} {rig} {role} {session} {conversation} {context_file} {project} {work}." placeholder:"TEMPLATE"`
	ResumeCommand string `name:"resume-command" json:"resume_command,omitempty" help:"Resume template (resumes {conversation} by id)." placeholder:"TEMPLATE"`
	Work          string `name:"work" json:"work,omitempty" help:"Work item the seat claims." placeholder:"KEY"`
	Cwd           string `name:"cwd" json:"cwd,omitempty" help:"Directory the agent runs in (relative to the project)." placeholder:"DIR"`
	Policy        string `name:"policy" default:"resume_if_possible" enum:"resume_if_possible,relaunch_fresh,checkpoint_only" json:"policy,omitempty" help:"Restore policy: resume_if_possible (default), relaunch_fresh or checkpoint_only." placeholder:"POLICY"`
	StopMessage   string `name:"stop-message" json:"stop_message,omitempty" help:"Message typed to the agent when its rig goes down (placeholders as for --command)." placeholder:"TEXT"`
	// ConversationStore: see events.SeatDeclared.
	ConversationStore string `name:"conversation-store" json:"conversation_store,omitempty" help:"Runtime generic: the file that holds a conversation, a template with {conversation} (and {project}, {home}) relative to --cwd, so a restore can tell a conversation that is gone." placeholder:"TEMPLATE"`
	WriteMeta
}

// SeatResult is the seat after a declaration or removal.
type SeatResult struct {
	Replay
	Seat            *projections.Seat `json:"seat"`
	Changed         bool              `json:"changed"`
	ProjectRevision int64             `json:"project_revision"`
}

// Declaration validates req and returns the seat_declared payload it
// stands for.
func (req SeatRequest) Declaration() (*events.SeatDeclared, error) {
	role, rig, err := ParseAddress(req.Address)
	if err != nil {
		return nil, err
	}
	d := &events.SeatDeclared{Address: req.Address, Role: role, Rig: rig, Runtime: req.Runtime, Command: req.Command,
		ResumeCommand: req.ResumeCommand, Work: req.Work, Cwd: req.Cwd, Policy: orDefault(req.Policy, events.PolicyResumeIfPossible), StopMessage: req.StopMessage,
		ConversationStore: req.ConversationStore}
	switch d.Runtime {
	case events.RuntimeGeneric:
		if strings.TrimSpace(d.Command) == "" {
			return nil, fault.New(fault.InvalidInput, "seat %s: runtime generic needs --command", d.Address).With("field", "command").
				WithHint("awr seat add %s --runtime generic --command 'my-agent --context {context_file}'", d.Address)
		}
	case events.RuntimeClaude, events.RuntimeCodex:
	default:
		return nil, fault.New(fault.InvalidInput, "seat %s: --runtime %q is not generic, claude or codex", d.Address, d.Runtime).With("field", "runtime")
	}
	switch d.Policy {
	case events.PolicyResumeIfPossible, events.PolicyRelaunchFresh, events.PolicyCheckpointOnly:
	default:
		return nil, fault.New(fault.InvalidInput, "seat %s: --policy %q is not resume_if_possible, relaunch_fresh or checkpoint_only", d.Address, d.Policy).With("field", "policy")
	}
	for _, f := range [][2]string{{"command", d.Command}, {"resume_command", d.ResumeCommand}, {"stop_message", d.StopMessage}} {
		if err := checkTemplate(d.Address, f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if err := checkStore(d); err != nil {
		return nil, err
	}
	if err := refuseSecrets("seat", [2]string{"command", d.Command}, [2]string{"resume_command", d.ResumeCommand},
		[2]string{"stop_message", d.StopMessage}, [2]string{"cwd", d.Cwd}, [2]string{"work", d.Work}, [2]string{"conversation_store", d.ConversationStore}); err != nil {
		return nil, err
	}
	return d, nil
}

// DeclareSeat records a seat's declaration (seat_declared). Declaring it
// again unchanged writes nothing; a changed declaration replaces the old
// one and keeps what its occupants did.
// Errors: InvalidInput for a bad address, runtime, policy or template;
// NotFound for an unknown work item; RuleViolation for a secret.
func DeclareSeat(ctx context.Context, env *Env, req SeatRequest) (*SeatResult, error) {
	d, err := req.Declaration()
	if err != nil {
		return nil, err
	}
	return write(ctx, env, "awr", req.WriteMeta, []string{"seat/" + d.Address}, req, func(tx *events.Tx) (*SeatResult, error) {
		return declareSeat(tx, d)
	})
}

// declareSeat appends d inside tx unless the seat is declared so already.
func declareSeat(tx *events.Tx, d *events.SeatDeclared) (*SeatResult, error) {
	if d.Work != "" {
		if _, err := findWork(tx, d.Work); err != nil {
			return nil, err
		}
	}
	cur, err := projections.SeatAt(tx.Conn, d.Address, tx.Head())
	if err != nil {
		return nil, err
	}
	res := &SeatResult{}
	if cur == nil || cur.SeatDeclared != *d {
		if _, err := tx.Append(events.NewEvent{Stream: "seat/" + d.Address, Payload: *d}); err != nil {
			return nil, err
		}
		res.Changed = true
	}
	if res.Seat, err = projections.SeatAt(tx.Conn, d.Address, tx.Head()); err != nil {
		return nil, err
	}
	res.ProjectRevision = tx.Head()
	return res, nil
}

// RemoveSeatRequest retires a seat.
type RemoveSeatRequest struct {
	Address string `arg:"" name:"address" json:"address" help:"Seat address ROLE@RIG." placeholder:"ROLE@RIG"`
	WriteMeta
}

// RemoveSeat retires a stopped seat (seat_removed); its history stays in
// the log. Errors: NotFound; InvalidTransition while it has a live session.
func RemoveSeat(ctx context.Context, env *Env, req RemoveSeatRequest) (*SeatResult, error) {
	_, rig, err := ParseAddress(req.Address)
	if err != nil {
		return nil, err
	}
	return write(ctx, env, "awr", req.WriteMeta, []string{"seat/" + req.Address}, req, func(tx *events.Tx) (*SeatResult, error) {
		return removeSeat(tx, req.Address, rig)
	})
}

// removeSeat appends seat_removed inside tx for a seat without a live
// session.
func removeSeat(tx *events.Tx, address, rig string) (*SeatResult, error) {
	req := RemoveSeatRequest{Address: address}
	cur, err := RequireSeat(tx.Conn, req.Address, tx.Head())
	if err != nil {
		return nil, err
	}
	if cur.SessionActive {
		return nil, fault.New(fault.InvalidTransition, "seat remove: %s is running session %s", req.Address, cur.SessionID).
			With("address", req.Address).With("session_id", cur.SessionID).WithHint("awr rig down %s", rig)
	}
	if _, err := tx.Append(events.NewEvent{Stream: "seat/" + req.Address, Payload: events.SeatRemoved{Address: req.Address, Rig: rig}}); err != nil {
		return nil, err
	}
	return &SeatResult{Seat: cur, Changed: true, ProjectRevision: tx.Head()}, nil
}

// RequireSeat returns the seat at rev or a NotFound error.
func RequireSeat(conn *sqlite.Conn, address string, rev int64) (*projections.Seat, error) {
	s, err := projections.SeatAt(conn, address, rev)
	if err != nil {
		return nil, err
	}
	if s == nil {
		_, rig, _ := strings.Cut(address, "@")
		return nil, fault.New(fault.NotFound, "seat %s not found", address).With("address", address).WithHint("awr seat list --rig %s", rig)
	}
	return s, nil
}

// LaunchRequest starts the session a seat's agent will work in and records
// the launch, in one transaction: a new session with a claim on the seat's
// work (FromSession empty), or a successor of FromSession that inherits its
// checkpoint and takes the claim.
type LaunchRequest struct {
	Address      string
	Mode         string
	FromSession  string
	Conversation string
	TmuxSession  string
	ContextFile  string
	RestoreID    string
	// TTLms is the lease of the seat's claim; 0 is the policy's (a moved
	// claim keeps the lease it had).
	TTLms int64
	// LaunchedSeq is the seq of the seat's last launch as the caller read
	// it: another launch since then is a RevisionConflict, so two
	// concurrent `rig up`s never launch one seat twice.
	LaunchedSeq int64
	// Budget is the token budget of the session's context packet; 0 is
	// workcontext.DefaultBudget.
	Budget int
	// Repo is the repository of the seat's directory at the launch (nil
	// outside a git work tree), recorded as the launch's reference.
	Repo *events.SeatRepo
	// Check is the caller's comparison of the latest checkpoint the
	// session's packet inherits with the seat's repository now
	// (workcontext.CheckRepo): the packet's repository section. Nil when
	// there is no checkpoint.
	Check *workcontext.RepoCheck
}

// LaunchResult is the session started for the seat.
type LaunchResult struct {
	SessionID       string
	ClaimID         string
	Seq             int64
	ProjectRevision int64
	// Context is the session's packet, compiled and recorded in the launch's
	// transaction; nil when it could not be compiled (ContextError says
	// why), in which case the launch stands without it.
	Context      *CompileResult
	ContextError error
}

// LaunchSeat starts (or resumes) the seat's session, appends
// seat_launched, and compiles and records the session's context packet,
// atomically: a crash leaves all of it or none. A packet that cannot be
// compiled (over budget) does not undo the launch; it is reported in
// ContextError.
// Errors: NotFound; InvalidInput for a seat without work; the errors of
// StartSession and ResumeSession (ClaimConflict, DependencyBlocked, ...).
func LaunchSeat(ctx context.Context, env *Env, req LaunchRequest) (*LaunchResult, error) {
	out := &LaunchResult{}
	// Inside, env is the batch's: the session command joins its transaction.
	rev, err := Batch(ctx, env, req.Address, func(env *Env) error {
		tx := env.batch.tx
		seat, err := RequireSeat(tx.Conn, req.Address, tx.Head())
		if err != nil {
			return err
		}
		if seat.LaunchedSeq != req.LaunchedSeq {
			return fault.New(fault.RevisionConflict, "seat %s was launched again at seq %d while this launch was being prepared", req.Address, seat.LaunchedSeq).
				With("address", req.Address).With("expected", req.LaunchedSeq).With("actual", seat.LaunchedSeq).WithHint("awr rig ps %s", seat.Rig)
		}
		if seat.Work == "" {
			return fault.New(fault.InvalidInput, "seat %s has no work item to claim", req.Address).With("address", req.Address).
				WithHint("awr seat add %s --runtime %s --work KEY", req.Address, seat.Runtime)
		}
		claim := true
		var ttl *int64
		if req.TTLms != 0 {
			ttl = &req.TTLms
		}
		var claimView *ClaimView
		if req.FromSession != "" {
			res, err := ResumeSession(ctx, env, ResumeRequest{FromSession: req.FromSession, Agent: req.Address, Provider: seat.Runtime, Claim: &claim, TTLms: ttl})
			if err != nil {
				return err
			}
			out.SessionID, claimView = res.Session.ID, res.Claim
		} else {
			res, err := StartSession(ctx, env, StartRequest{Work: seat.Work, Agent: req.Address, Provider: seat.Runtime, Claim: true, TTLms: ttl,
				RepoDir: seatWorkdir(seat.Cwd)})
			if err != nil {
				return err
			}
			out.SessionID, claimView = res.Session.ID, res.Claim
		}
		if claimView != nil {
			out.ClaimID = claimView.ID
		}
		ev, err := tx.Append(events.NewEvent{Stream: "seat/" + req.Address, Payload: events.SeatLaunched{
			Address: req.Address, Rig: seat.Rig, Mode: req.Mode, SessionID: out.SessionID, ClaimID: out.ClaimID, TmuxSession: req.TmuxSession,
			ContextFile: req.ContextFile, Conversation: req.Conversation, RestoreID: req.RestoreID, Repo: req.Repo,
		}})
		if err != nil {
			return err
		}
		out.Seq = ev.Seq
		c, err := compileAt(tx.Conn, tx.Head(), true, seat.Work, out.SessionID, compileOpts{budget: req.Budget, loopCap: env.policy().OpenLoopCap, repo: req.Check})
		if err != nil {
			if code := fault.As(err).Code; code == fault.Storage || code == fault.Internal {
				return err
			}
			out.ContextError = err
			return nil
		}
		if err := recordCompiled(tx, c, out.SessionID); err != nil {
			return err
		}
		out.Context = c
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.ProjectRevision = rev
	return out, nil
}

// ApplyRigResult lists each seat's change: created, updated, unchanged or
// removed.
type ApplyRigResult struct {
	Changes         [][2]string
	ProjectRevision int64
}

// ApplyRig makes rig's seats exactly reqs in one transaction: each is
// declared (or left alone when unchanged) and seats of the rig that reqs
// do not list are removed. Any error (a running seat to remove, an unknown
// work item) writes nothing.
func ApplyRig(ctx context.Context, env *Env, rig string, reqs []SeatRequest) (*ApplyRigResult, error) {
	if err := CheckRigName(rig); err != nil {
		return nil, err
	}
	decls := make([]*events.SeatDeclared, len(reqs))
	for i, req := range reqs {
		if _, r, err := ParseAddress(req.Address); err != nil {
			return nil, err
		} else if r != rig {
			return nil, fault.New(fault.InvalidInput, "rig apply: seat %s is not in rig %s", req.Address, rig).With("address", req.Address)
		}
		d, err := req.Declaration()
		if err != nil {
			return nil, err
		}
		decls[i] = d
	}
	out, err := write(ctx, env, "awr", WriteMeta{}, []string{"rig/" + rig}, nil, func(tx *events.Tx) (*ApplyRigResult, error) {
		out := &ApplyRigResult{}
		cur, err := projections.SeatsAt(tx.Conn, rig, tx.Head())
		if err != nil {
			return nil, err
		}
		existing := map[string]bool{}
		for _, s := range cur {
			existing[s.Address] = true
		}
		keep := map[string]bool{}
		for _, d := range decls {
			res, err := declareSeat(tx, d)
			if err != nil {
				return nil, err
			}
			change := "unchanged"
			if res.Changed {
				change = "updated"
				if !existing[d.Address] {
					change = "created"
				}
			}
			keep[d.Address] = true
			out.Changes = append(out.Changes, [2]string{d.Address, change})
		}
		for _, s := range cur {
			if keep[s.Address] {
				continue
			}
			if _, err := removeSeat(tx, s.Address, rig); err != nil {
				return nil, err
			}
			out.Changes = append(out.Changes, [2]string{s.Address, "removed"})
		}
		out.ProjectRevision = tx.Head()
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RecordSeatRestored appends a seat's outcome in a restore attempt, once
// per attempt and launch: when the attempt already recorded an outcome for
// the seat's current launch (another `rig up` continuing the same attempt
// got there first), it writes nothing and returns that outcome and reason.
func RecordSeatRestored(ctx context.Context, env *Env, pl events.SeatRestored) (recorded bool, outcome, reason string, err error) {
	type result struct {
		Recorded        bool
		Outcome, Reason string
	}
	res, err := write(ctx, env, "awr", WriteMeta{}, []string{"seat/" + pl.Address}, nil, func(tx *events.Tx) (*result, error) {
		seat, err := projections.SeatAt(tx.Conn, pl.Address, tx.Head())
		if err != nil {
			return nil, err
		}
		if seat != nil && seat.RestoredIn == pl.RestoreID && seat.RestoredSeq > seat.LaunchedSeq {
			return &result{Outcome: seat.RestoredOutcome, Reason: seat.RestoredReason}, nil
		}
		if _, err := tx.Append(events.NewEvent{Stream: "seat/" + pl.Address, Payload: pl}); err != nil {
			return nil, err
		}
		return &result{Recorded: true, Outcome: pl.Outcome, Reason: pl.Reason}, nil
	})
	if err != nil {
		return false, "", "", err
	}
	return res.Recorded, res.Outcome, res.Reason, nil
}

// CompleteRestore appends restore_completed once per attempt; a second
// completion writes nothing. It returns the project revision.
func CompleteRestore(ctx context.Context, env *Env, pl events.RestoreCompleted) (int64, error) {
	type result struct{ Rev int64 }
	res, err := write(ctx, env, "awr", WriteMeta{}, []string{"rig/" + pl.Rig}, nil, func(tx *events.Tx) (*result, error) {
		done, err := projections.RestoreCompletedAt(tx.Conn, pl.Rig, pl.RestoreID, tx.Head())
		if err != nil {
			return nil, err
		}
		if !done {
			if _, err := tx.Append(events.NewEvent{Stream: "rig/" + pl.Rig, Payload: pl}); err != nil {
				return nil, err
			}
		}
		return &result{Rev: tx.Head()}, nil
	})
	if err != nil {
		return 0, err
	}
	return res.Rev, nil
}

// seatWorkdir is the working directory recorded for a seat's session: its
// cwd when that is relative to the project root ("" for the root).
func seatWorkdir(cwd string) string {
	cwd = filepath.ToSlash(filepath.Clean(cwd))
	if cwd == "." || filepath.IsAbs(cwd) || strings.HasPrefix(cwd, "../") || cwd == ".." {
		return ""
	}
	return cwd
}

// ClearAttentionRequest answers a seat's attention_required: a person
// looked, and says what they checked and decided.
type ClearAttentionRequest struct {
	Address string `arg:"" name:"address" json:"address" help:"Seat address ROLE@RIG." placeholder:"ROLE@RIG"`
	Reason  string `name:"reason" required:"" json:"reason" help:"What you checked and decided (recorded in the log)." placeholder:"TEXT"`
	WriteMeta
}

// ClearAttentionResult is the seat after its attention was answered.
type ClearAttentionResult struct {
	Replay
	Address string `json:"address"`
	// AttentionSeq, AttentionRestoreID and AttentionReason are the
	// attention_required answered: its seat_restored's seq, its restore
	// and its reason.
	AttentionSeq       int64             `json:"attention_seq"`
	AttentionRestoreID string            `json:"attention_restore_id,omitempty"`
	AttentionReason    string            `json:"attention_reason"`
	Reason             string            `json:"reason"`
	Seat               *projections.Seat `json:"seat"`
	ProjectRevision    int64             `json:"project_revision"`
}

// ClearSeatAttention records a person's answer to the seat's pending
// attention_required (seat_attention_cleared); until then every `rig up`
// reports the seat attention_required.
// Errors: InvalidInput for a malformed address or an empty reason;
// RuleViolation for a reason that holds a secret; NotFound for an unknown
// seat; InvalidTransition when no attention is pending.
func ClearSeatAttention(ctx context.Context, env *Env, req ClearAttentionRequest) (*ClearAttentionResult, error) {
	_, rig, err := ParseAddress(req.Address)
	if err != nil {
		return nil, err
	}
	if err := required("reason", req.Reason); err != nil {
		return nil, err
	}
	if err := refuseSecrets("seat clear-attention", [2]string{"reason", req.Reason}); err != nil {
		return nil, err
	}
	return write(ctx, env, "awr", req.WriteMeta, []string{"seat/" + req.Address}, req, func(tx *events.Tx) (*ClearAttentionResult, error) {
		cur, err := RequireSeat(tx.Conn, req.Address, tx.Head())
		if err != nil {
			return nil, err
		}
		if cur.AttentionSeq == 0 {
			return nil, fault.New(fault.InvalidTransition, "seat clear-attention: %s has no attention_required to answer", req.Address).
				With("address", req.Address).WithHint("awr rig ps %s", rig)
		}
		pl := events.SeatAttentionCleared{Address: req.Address, Rig: rig, Reason: req.Reason, AttentionSeq: cur.AttentionSeq, RestoreID: cur.AttentionRestoreID}
		if _, err := tx.Append(events.NewEvent{Stream: "seat/" + req.Address, Payload: pl}); err != nil {
			return nil, err
		}
		res := &ClearAttentionResult{Address: req.Address, AttentionSeq: cur.AttentionSeq, AttentionRestoreID: cur.AttentionRestoreID,
			AttentionReason: cur.AttentionReason, Reason: req.Reason, ProjectRevision: tx.Head()}
		if res.Seat, err = projections.SeatAt(tx.Conn, req.Address, tx.Head()); err != nil {
			return nil, err
		}
		return res, nil
	})
}
