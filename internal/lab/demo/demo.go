// Package demo runs awr's scripted handoff on a temporary project (or one it
// keeps): the sequence a user would type, with the key fields of every
// answer and what was recorded in full, the successor's packet as the
// evidence of the handoff, ending with proof that the log verifies, replays
// and re-imports identically.
package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/fixtures"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/project"
	"github.com/awr-dev/awr/projections"
)

// Options configures a demo run.
type Options struct {
	// Dir is the project directory; a temporary one (removed afterwards)
	// when empty.
	Dir string
	// Now and Entropy drive the commands; real clock and crypto entropy
	// when nil. Tests pass fixed ones to record a reproducible log.
	Now     func() time.Time
	Entropy io.Reader
	// Out receives the step-by-step text; nil for none.
	Out io.Writer
}

// Step is one demonstrated command and what it answered.
type Step struct {
	Command string `json:"command"`
	Result  string `json:"result"`
	// Detail is what the step recorded or read, in full, one line each
	// (the digest, the next action, each open loop; the packet).
	Detail   []string       `json:"detail,omitempty"`
	Fields   map[string]any `json:"fields,omitempty"`
	Revision int64          `json:"project_revision"`
}

// Report is the whole demo.
type Report struct {
	Project         string `json:"project"`
	Steps           []Step `json:"steps"`
	ProjectRevision int64  `json:"project_revision"`
	HeadHash        string `json:"head_hash"`
	Verified        bool   `json:"verified"`
	ImportMatches   bool   `json:"import_matches"`
	// Kept says the project stays in Project after the run (Options.Dir);
	// otherwise Project named a temporary directory, removed when Run
	// returned.
	Kept bool `json:"kept"`
	// Export is the JSONL log, for recording fixtures.
	Export []byte `json:"-"`
}

type runner struct {
	ctx     context.Context
	p       *project.Project
	out     io.Writer
	report  *Report
	initRes *project.InitResult
	indexed []string
}

func (r *runner) step(cmd, result string, rev int64, fields map[string]any, detail ...string) {
	r.report.Steps = append(r.report.Steps, Step{Command: cmd, Result: result, Detail: detail, Fields: fields, Revision: rev})
	if r.out != nil {
		fmt.Fprintf(r.out, "$ %s\n  %s\n", cmd, result)
		for _, d := range detail {
			if d == "" {
				fmt.Fprintln(r.out)
				continue
			}
			fmt.Fprintf(r.out, "    %s\n", d)
		}
	}
}

// word quotes s as a shell word when it needs it.
func word(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Run executes the demo. Errors are any command's error: the demo stops at
// the first step that fails.
func Run(ctx context.Context, opts Options) (*Report, error) {
	dir, kept := opts.Dir, opts.Dir != ""
	if dir != "" {
		if err := emptyDir(dir); err != nil {
			return nil, err
		}
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "awr-demo-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = filepath.Join(tmp, "checkout")
		if err := os.Mkdir(dir, 0o755); err != nil {
			return nil, err
		}
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	// The project is a copy of the checkout sample, its files stamped with
	// the demo's clock so that a run with a fixed clock is reproducible.
	if _, err := fixtures.CopyProject("checkout", dir); err != nil {
		return nil, err
	}
	stamp := now()
	if err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, stamp, stamp)
	}); err != nil {
		return nil, err
	}
	p, err := project.Open(ctx, dir, project.Options{Now: now, Entropy: opts.Entropy})
	if err != nil {
		return nil, err
	}
	defer p.Close()
	initRes, err := p.Init(ctx, project.InitRequest{Name: "checkout", Accept: true})
	if err != nil {
		return nil, err
	}
	r := &runner{ctx: ctx, p: p, out: opts.Out, report: &Report{Project: dir, Kept: kept}, initRes: initRes}
	for _, m := range initRes.Mapping {
		si, _ := intake.Read(dir, m)
		r.indexed = append(r.indexed, fmt.Sprintf("%s: %d items, %d goals, %d rules", m.Path, len(si.Items), len(si.Goals), len(si.Rules)))
	}
	if err := r.script(); err != nil {
		return r.report, err
	}
	return r.report, nil
}

func (r *runner) script() error {
	ctx := r.ctx
	r.step("awr init --accept --name checkout", fmt.Sprintf("project \"checkout\" initialized: indexed %s", strings.Join(r.indexed, ", ")),
		r.initRes.ProjectRevision, map[string]any{"project_id": r.initRes.ProjectID})

	status, err := r.p.Status(ctx, project.StatusRequest{})
	if err != nil {
		return err
	}
	r.step("awr status", fmt.Sprintf("project_revision %d, %d work items, %d ready", status.ProjectRevision, status.WorkItems, status.ReadyCount), status.ProjectRevision, nil)

	ready, err := r.p.Ready(ctx, project.ReadyRequest{})
	if err != nil {
		return err
	}
	var keys []string
	for _, it := range ready.Ready {
		keys = append(keys, it.Key+" ("+it.NextAction+")")
	}
	r.step("awr ready", "claimable now: "+strings.Join(keys, ", "), ready.ProjectRevision, nil)

	rev := status.ProjectRevision
	start, err := r.p.SessionStart(ctx, project.SessionStartRequest{Work: "CART-1", Agent: "builder", Provider: "anthropic", Model: "claude-opus", Claim: true, TTLms: new(int64(30 * 60 * 1000)), WriteMeta: project.WriteMeta{ExpectedRevision: &rev}})
	if err != nil {
		return err
	}
	sid := start.Session.ID
	r.step(fmt.Sprintf("awr session start --work CART-1 --agent builder --provider anthropic --model claude-opus --claim --ttl 30m --expected-revision %d", rev),
		fmt.Sprintf("session %s, claim fencing token %d, lease until %s", sid, start.Claim.FencingToken, time.UnixMilli(start.Claim.ExpiresAt).UTC().Format(time.RFC3339)),
		start.ProjectRevision, map[string]any{"session_id": sid, "fencing_token": start.Claim.FencingToken})

	compiled, err := r.p.ContextCompile(ctx, project.ContextCompileRequest{Work: "CART-1", Session: sid, Budget: new(5000)})
	if err != nil {
		return err
	}
	hash := compiled.WorkContext.ContextHash
	ctxRec := struct{ ProjectRevision int64 }{compiled.ProjectRevision}
	r.step("awr context compile --work CART-1 --session "+sid, fmt.Sprintf("packet of %d o200k_base tokens (budget %d), complete %v, hash %s, recorded for the session",
		compiled.WorkContext.TokenEstimate, compiled.WorkContext.TokenBudget, compiled.Completeness.Complete, hash), compiled.ProjectRevision, map[string]any{"context_hash": hash})

	digest := "Added carts table migration and CartStore.Save; unit tests for Save written, not yet run."
	next := "Run the cart store tests, then wire Save into the cart handler"
	loops := []string{"Decide cart TTL for anonymous users", "Migration not yet applied to staging"}
	decisions := []string{"Carts live in their own table, keyed by user or anonymous token"}
	cp, err := r.p.SessionCheckpoint(ctx, project.SessionCheckpointRequest{
		SessionID: sid, Agent: "builder", ContextHash: hash,
		Digest: digest, NextAction: next,
		KnowledgeFlags: project.KnowledgeFlags{OpenLoops: loops, Decisions: decisions},
		WriteMeta:      project.WriteMeta{ExpectedRevision: &ctxRec.ProjectRevision},
	})
	if err != nil {
		return err
	}
	cmd := fmt.Sprintf("awr session checkpoint --session %s --agent builder --context-hash %s --digest %s --next-action %s", sid, hash, word(digest), word(next))
	for _, l := range loops {
		cmd += " --open-loop " + word(l)
	}
	for _, d := range decisions {
		cmd += " --decision " + word(d)
	}
	r.step(fmt.Sprintf("%s --expected-revision %d", cmd, ctxRec.ProjectRevision),
		fmt.Sprintf("checkpoint %s at seq %d, context_hash_verified %v; recorded:", cp.Checkpoint.ID, cp.Checkpoint.Seq, cp.Checkpoint.ContextHashVerified),
		cp.ProjectRevision, map[string]any{"checkpoint_id": cp.Checkpoint.ID}, recorded(cp.Checkpoint.Digest, cp.Checkpoint.NextAction, cp.Knowledge)...)
	checkpointRev := cp.ProjectRevision

	bind, err := r.p.ClientBind(ctx, project.ClientBindRequest{Client: "claude-code", ExternalSession: "claude-code:conv-7f3a", Work: "CART-1", SessionID: sid})
	if err != nil {
		return err
	}
	r.step("awr client bind --client claude-code --external-session claude-code:conv-7f3a --work CART-1 --session "+sid,
		"bound; next action on record: "+bind.Binding.NextAction, bind.ProjectRevision, nil)

	r.step("(the terminal closes: the builder's conversation is gone, its session still active)", "nothing is written: the log already holds everything", bind.ProjectRevision, nil)

	// The one step that does not go through the door: `awr session resume`
	// also compiles and records the successor's context in the same
	// transaction, and the demo's recorded log (fixtures/logs/handoff.jsonl,
	// which the tamper and verify suites are built on) pins the resume
	// alone, so the demo shows that step through commands.ResumeSession.
	env, err := r.p.Env(ctx)
	if err != nil {
		return err
	}
	res, err := commands.ResumeSession(ctx, env, commands.ResumeRequest{FromSession: sid, Agent: "builder-2", Provider: "openai", Model: "gpt-5", WriteMeta: commands.WriteMeta{ExpectedRevision: &bind.ProjectRevision}})
	if err != nil {
		return err
	}
	succ := res.Session
	r.step(fmt.Sprintf("awr session resume --from-session %s --agent builder-2 --provider openai --model gpt-5 --expected-revision %d", sid, bind.ProjectRevision),
		fmt.Sprintf("successor %s inherits checkpoint %s; claim moved (fencing token %d); predecessor ended as interrupted; it inherits:", succ.ID, res.Checkpoint.ID, res.Claim.FencingToken),
		res.ProjectRevision, map[string]any{"session_id": succ.ID, "digest": res.Checkpoint.Digest, "next_action": res.Checkpoint.NextAction, "open_loops": loopLines(cp.Knowledge.OpenLoops)},
		recorded(res.Checkpoint.Digest, res.Checkpoint.NextAction, cp.Knowledge)...)

	rec, err := r.p.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: succ.ID})
	if err != nil {
		return err
	}
	r.step("awr recovery inspect --session "+succ.ID, fmt.Sprintf("claim %s (token %d); checkpoint inherited: %v; next: %s", rec.Claim.StateNow, rec.Claim.FencingToken, rec.Inherited, rec.NextStep),
		rec.ProjectRevision, map[string]any{"next_step": rec.NextStep})

	// The resume named no conversation, so the old binding cannot follow
	// it by itself: the conversation is handed to the successor by name.
	rebind, err := r.p.ClientBind(ctx, project.ClientBindRequest{Client: "claude-code", ExternalSession: "claude-code:conv-7f3a", Work: "CART-1", SessionID: succ.ID})
	if err != nil {
		return err
	}
	r.step("awr client bind --client claude-code --external-session claude-code:conv-7f3a --work CART-1 --session "+succ.ID,
		"binding handed to the successor "+rebind.Binding.SessionID, rebind.ProjectRevision, nil)

	// The evidence of the handoff: the packet the successor is handed, in
	// full, read without writing (the log the demo records stays as it is).
	packet, err := r.p.ContextPacket(ctx, project.ContextPacketRequest{Session: succ.ID})
	if err != nil {
		return err
	}
	pk := packet.WorkContext
	r.step("(the successor's packet, as awr session resume hands it over and awr context compile --work CART-1 --session "+succ.ID+" compiles it)",
		fmt.Sprintf("%d o200k_base tokens (budget %d), complete %v, hash %s:", pk.TokenEstimate, pk.TokenBudget, packet.Completeness.Complete, pk.ContextHash),
		packet.ProjectRevision, map[string]any{"context_hash": pk.ContextHash, "packet": pk.RenderedContext},
		strings.Split(strings.TrimRight(pk.RenderedContext, "\n"), "\n")...)

	logRes, err := r.p.Log(ctx, project.LogRequest{Work: "CART-1"})
	if err != nil {
		return err
	}
	kinds := make([]string, 0, len(logRes.Events))
	for _, e := range logRes.Events {
		kinds = append(kinds, string(e.Kind))
	}
	r.step("awr log --work CART-1", fmt.Sprintf("%d events: %s", logRes.Count, strings.Join(kinds, ", ")), logRes.ProjectRevision, nil)

	past, err := r.p.Status(ctx, project.StatusRequest{Read: project.Read{At: &checkpointRev}})
	if err != nil {
		return err
	}
	now, err := r.p.Status(ctx, project.StatusRequest{})
	if err != nil {
		return err
	}
	r.step(fmt.Sprintf("awr status --at %d", checkpointRev), fmt.Sprintf("as of the checkpoint: session %s active with %d live claim; at the head: %d active session (the successor)",
		sid, past.LiveClaims, now.Sessions.Active), past.ProjectRevision, nil)

	ver, err := r.p.Verify(ctx, project.VerifyRequest{})
	if err != nil {
		return err
	}
	r.step("awr verify", fmt.Sprintf("%d events, hash chain intact, %d projections equal a rebuild; head hash %s", ver.EventsChecked, len(ver.Projections), ver.HeadHash), ver.ProjectRevision, nil)

	var buf bytes.Buffer
	exp, err := r.p.Export(ctx, project.ExportRequest{}, &buf)
	if err != nil {
		return err
	}
	r.report.Export = buf.Bytes()
	matches, err := reimport(ctx, buf.Bytes(), exp.HeadHash, now)
	if err != nil {
		return err
	}
	r.step("awr export --output checkout.jsonl && awr import checkout.jsonl --project audit/",
		fmt.Sprintf("%d events re-imported into an empty project; chain verified; same status: %v", exp.Events, matches), exp.ProjectRevision, nil)

	r.report.ProjectRevision, r.report.HeadHash, r.report.Verified, r.report.ImportMatches = ver.ProjectRevision, ver.HeadHash, ver.OK, matches
	return nil
}

// emptyDir checks that dir exists, is a directory and holds nothing, so
// the demo never mixes its history into a real project.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return fault.New(fault.InvalidInput, "demo: --keep %s does not exist", dir).With("path", dir).WithHint("awr demo")
		}
		return fault.New(fault.InvalidInput, "demo: --keep %s: %v", dir, err).With("path", dir)
	}
	if len(entries) > 0 {
		return fault.New(fault.InvalidInput, "demo: --keep %s is not empty; the demo needs an empty directory", dir).With("entries", len(entries)).
			With("path", dir).WithHint("awr demo")
	}
	return nil
}

// reimport imports the export into a fresh project and compares its status
// with the original's.
func reimport(ctx context.Context, export []byte, headHash string, want *project.StatusResult) (bool, error) {
	dir, err := os.MkdirTemp("", "awr-audit-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	p, err := project.Open(ctx, dir, project.Options{Now: func() time.Time { return time.UnixMilli(want.LastEventAt) }})
	if err != nil {
		return false, err
	}
	defer p.Close()
	imp, err := p.Import(ctx, project.ImportRequest{File: "-"}, bytes.NewReader(export))
	if err != nil {
		return false, err
	}
	got, err := p.Status(ctx, project.StatusRequest{})
	if err != nil {
		return false, err
	}
	return imp.HeadHash == headHash && got.HeadHash == want.HeadHash && got.Sessions == want.Sessions &&
		got.WorkItems == want.WorkItems && got.ProjectRevision == want.ProjectRevision, nil
}

// recorded renders what a checkpoint recorded, in full: its digest, next
// action, open loops and decisions.
func recorded(digest, next string, k *projections.KnowledgeState) []string {
	out := []string{"digest: " + digest, "next action: " + next}
	if k != nil {
		for _, l := range k.OpenLoops {
			out = append(out, "open loop "+l.ID+": "+l.Text)
		}
		for _, d := range k.Decisions {
			out = append(out, "decision "+d.ID+": "+d.Text)
		}
	}
	return out
}

// loopLines renders open loops as "L-1: text".
func loopLines(loops []projections.Knowledge) []string {
	out := []string{}
	for _, l := range loops {
		out = append(out, l.ID+": "+l.Text)
	}
	return out
}
