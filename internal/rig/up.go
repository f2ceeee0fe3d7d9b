package rig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/secret"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/projections"
	"github.com/google/uuid"
)

// Rolled-up restore results. Abandoned closes an attempt that a crash
// left unfinished when the rig is taken down before any up continued it.
const (
	FullyRestored     = "fully_restored"
	PartiallyRestored = "partially_restored"
	Failed            = "failed"
	Abandoned         = "abandoned"
)

// UpOptions selects a rig and what a person decided.
type UpOptions struct {
	Rig string
	// Fresh names seats to relaunch with a new conversation.
	Fresh []string
	// Plan shows the decisions without touching anything.
	Plan bool
}

// UpResult is `awr rig up`.
type UpResult struct {
	Rig             string      `json:"rig"`
	Snapshot        *string     `json:"snapshot"`
	RestoreID       string      `json:"restore_id,omitempty"`
	Continued       bool        `json:"continued,omitempty"`
	Plan            bool        `json:"plan,omitempty"`
	Result          string      `json:"result"`
	Seats           []*SeatPlan `json:"seats"`
	ProjectRevision int64       `json:"project_revision"`
}

// OK reports whether every seat is resumed, fresh-primed or already
// running: the only results that exit 0.
func (r *UpResult) OK() bool { return r.Result == FullyRestored }

// Incomplete is nil for an up of rigName (a plan when plan) that restored
// every seat (OK); otherwise the RestoreIncomplete error naming each seat
// that was not resumed, fresh-primed or running, whose hint is the first
// seat's next command (else awr rig ps).
func (r *UpResult) Incomplete(rigName string, plan bool) error {
	if r.OK() {
		return nil
	}
	var bad []string
	for _, s := range r.Seats {
		if !succeeded(s.Outcome) {
			bad = append(bad, s.Address+" "+s.Outcome)
		}
	}
	verb := "is"
	if plan {
		verb = "would be"
	}
	e := fault.New(fault.RestoreIncomplete, "rig %s %s %s: %s", rigName, verb, r.Result, strings.Join(bad, ", ")).With("rig", rigName).With("result", r.Result)
	for _, s := range r.Seats {
		if s.Hint != "" {
			return e.WithHint("%s", s.Hint)
		}
	}
	return e.WithHint("awr rig ps %s", rigName)
}

func succeeded(outcome string) bool {
	return outcome == events.SeatResumed || outcome == events.SeatFreshPrimed || outcome == events.SeatRunning
}

func allRunning(seats []*SeatPlan) bool {
	for _, s := range seats {
		if s.Outcome != events.SeatRunning {
			return false
		}
	}
	return true
}

// attentionHints gives each attention_required seat the command that
// answers it.
func attentionHints(seats []*SeatPlan) {
	for _, s := range seats {
		if s.Outcome == events.SeatAttentionRequired && s.Hint == "" {
			s.Hint = clearHint(s.Address)
		}
	}
}

func rollUp(seats []*SeatPlan) string {
	ok := 0
	for _, s := range seats {
		if succeeded(s.Outcome) {
			ok++
		}
	}
	switch ok {
	case len(seats):
		return FullyRestored
	case 0:
		return Failed
	}
	return PartiallyRestored
}

// Up brings a rig up: every stopped seat is launched (or restored from the
// latest snapshot) and gets exactly one outcome. With Plan nothing is
// written or launched. An unfinished attempt (a crash mid-restore) is
// continued: seats it already restored are not relaunched.
func (m *Manager) Up(ctx context.Context, opts UpOptions) (*UpResult, error) {
	if err := m.Tmux.Available(); err != nil {
		return nil, fault.New(fault.InvalidInput, "rig up: tmux not found on PATH; install tmux").WithHint("awr rig up %s", opts.Rig)
	}
	st, err := m.loadSeats(ctx, opts.Rig)
	if err != nil {
		return nil, err
	}
	fresh, err := freshSeats(st, opts)
	if err != nil {
		return nil, err
	}
	res := &UpResult{Rig: st.rig, Plan: opts.Plan, ProjectRevision: st.head}
	if st.snapshot != nil {
		res.Snapshot = &st.snapshot.SnapshotID
	}
	for _, ss := range st.seats {
		res.Seats = append(res.Seats, m.decide(ctx, st, ss, fresh[ss.seat.Address]))
	}
	needsLaunch := false
	for _, p := range res.Seats {
		needsLaunch = needsLaunch || p.Launches()
	}
	if needsLaunch {
		// Launching claims work: its sources must be current.
		stale, err := m.Stale(ctx)
		if err != nil {
			return nil, err
		}
		if len(stale) > 0 {
			return nil, fault.New(fault.SourceStale, "rig up: sources changed since they were indexed: %s", strings.Join(stale, ", ")).
				With("sources", stale).WithHint("awr source reindex")
		}
	}
	if opts.Plan {
		res.Result = rollUp(res.Seats)
		attentionHints(res.Seats)
		return res, nil
	}
	if st.unfinished == nil && allRunning(res.Seats) {
		// Every seat runs: there is nothing to restore and nothing to
		// record.
		res.Result = FullyRestored
		return res, nil
	}
	addrs := make([]string, len(st.seats))
	for i, ss := range st.seats {
		addrs[i] = ss.seat.Address
	}
	me := self()
	rs := events.RestoreStarted{RestoreID: m.newID(), Rig: st.rig, Seats: addrs, Owner: me}
	if st.snapshot != nil {
		rs.SnapshotID = st.snapshot.SnapshotID
	}
	if u := st.unfinished; u != nil {
		if o := u.Owner; running(o) && *o != *me {
			return nil, fault.New(fault.InvalidTransition, "rig up: restore %s of rig %s is in progress in process %d on %s", u.RestoreID, st.rig, o.PID, o.Host).
				With("restore_id", u.RestoreID).With("pid", o.PID).With("host", o.Host).WithHint("awr rig ps %s", st.rig)
		}
		// The process that started it is gone: this up takes it over.
		rs.RestoreID, rs.Continued = u.RestoreID, true
		res.Continued = true
	}
	res.RestoreID = rs.RestoreID
	// Scoped to the rig's stream as read: of two ups that start (or take
	// over) an attempt together, the second fails with RevisionConflict
	// before it launches anything.
	if _, err := commands.StartRestore(ctx, m.Env, rs, st.head); err != nil {
		return nil, err
	}
	m.crash("restore_started")
	for _, p := range res.Seats {
		// A --fresh that changes nothing (the seat runs, or starts fresh
		// anyway by policy or as a first launch) is not a decision.
		if p.decide && p.Action == ActionFresh && p.seat.seat.Policy != events.PolicyRelaunchFresh {
			if _, err := commands.DecideSeat(ctx, m.Env, commands.SeatDecision{Address: p.Address, Decision: events.DecisionFresh, Scope: p.scope}); err != nil {
				return nil, err
			}
		}
	}
	pending, err := m.launchSeats(ctx, res, st.rig)
	if err != nil {
		return nil, err
	}
	if err := m.verify(ctx, st.rig, res.RestoreID, pending); err != nil {
		return nil, err
	}
	res.Result = rollUp(res.Seats)
	attentionHints(res.Seats)
	rev, err := commands.CompleteRestore(ctx, m.Env, events.RestoreCompleted{RestoreID: res.RestoreID, Rig: st.rig, Result: res.Result})
	if err != nil {
		return nil, err
	}
	res.ProjectRevision = rev
	return res, nil
}

// freshSeats returns the seats --fresh names, each a seat of the rig.
func freshSeats(st *rigState, opts UpOptions) (map[string]bool, error) {
	fresh := map[string]bool{}
	for _, a := range opts.Fresh {
		found := false
		for _, ss := range st.seats {
			found = found || ss.seat.Address == a
		}
		if !found {
			return nil, fault.New(fault.InvalidInput, "rig up: --fresh %s is not a seat of rig %s", a, opts.Rig).With("flag", "--fresh").With("address", a).
				WithHint("awr seat list --rig %s", opts.Rig)
		}
		fresh[a] = true
	}
	return fresh, nil
}

// launchSeats launches the seats of res that need it and records the
// outcome of those that need no verification; it returns the seats whose
// agents must still report (launched, or to verify).
func (m *Manager) launchSeats(ctx context.Context, res *UpResult, rig string) ([]*SeatPlan, error) {
	var pending []*SeatPlan
	for _, p := range res.Seats {
		switch {
		case p.seat.attempt != nil && p.Action == ActionNone:
			// Restored earlier in this attempt: already recorded.
		case p.Launches():
			if err := m.launch(ctx, res.RestoreID, p); err != nil {
				return nil, err
			}
			if p.Action != ActionNone {
				pending = append(pending, p)
			} else if err := m.record(ctx, res.RestoreID, rig, p); err != nil {
				return nil, err
			}
		case p.Action == ActionVerify:
			pending = append(pending, p)
		default:
			if err := m.record(ctx, res.RestoreID, rig, p); err != nil {
				return nil, err
			}
		}
	}
	return pending, nil
}

// launch starts the seat's session (with its claim) and its agent in tmux.
// A launch that fails leaves the plan with outcome failed and Action none,
// its new session ended as abandoned, and the seat's earlier state (its
// checkpoint, its conversation id) untouched.
func (m *Manager) launch(ctx context.Context, restoreID string, p *SeatPlan) error {
	s := &p.seat.seat
	rt := Runtimes[s.Runtime]
	mode := events.LaunchFresh
	switch p.Action {
	case ActionStart:
		mode = events.LaunchStart
	case ActionResume:
		mode = events.LaunchResume
	}
	if p.Action != ActionResume {
		p.Conversation = ""
		if rt.PreassignsConversation {
			p.Conversation = uuid.Must(uuid.NewRandomFromReader(m.Env.Entropy)).String()
		}
	}
	fail := func(reason string, err error, session string) error {
		return m.launchFailed(ctx, p, reason, err, session)
	}
	name := m.TmuxName(s.Address)
	dir := filepath.Join(m.Dir, ".awr", "seats", s.Address)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fault.Wrap(fault.Storage, err, "rig up: create %s", dir)
	}
	file := filepath.Join(dir, m.newID()+".md")
	var ttl int64
	if m.TTL > 0 {
		ttl = m.TTL.Milliseconds()
	}
	cur := p.current
	if cur == nil {
		cur, _, _ = m.repoState(ctx, m.seatDir(s.Cwd))
	}
	l, err := commands.LaunchSeat(ctx, m.Env, commands.LaunchRequest{Address: s.Address, Mode: mode, FromSession: p.FromSession,
		Conversation: p.Conversation, TmuxSession: name, ContextFile: file, RestoreID: restoreID, TTLms: ttl, LaunchedSeq: s.LaunchedSeq, Budget: m.Budget,
		Repo: cur, Check: m.packetRepo(ctx, s.Work, p.FromSession, m.seatDir(s.Cwd))})
	if err != nil {
		switch fault.CodeOf(err) {
		case fault.Storage, fault.Internal, fault.RevisionConflict:
			// Not the seat's failure: another up got there first, or the
			// log cannot be written. Stop; the attempt stays unfinished.
			return err
		}
		msg := err.Error()
		if fe := fault.As(err); fe != nil && fe.Hint != "" {
			p.Hint = fe.Hint
		}
		return fail("could not start the seat's session: "+msg, err, "")
	}
	p.SessionID = l.SessionID
	comp := l.Context
	if comp == nil {
		return fail("could not compile the seat's context: "+l.ContextError.Error(), l.ContextError, l.SessionID)
	}
	vars := map[string]string{"seat": s.Address, "rig": s.Rig, "role": s.Role, "session": l.SessionID, "conversation": p.Conversation,
		"context_file": file, "project": m.Dir, "work": s.Work}
	attention := ""
	if p.attention {
		attention = p.attnWhy
	}
	body := contextFile(s, l.SessionID, p.Conversation, m.Dir, attention, comp.WorkContext.RenderedContext)
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		return fail("could not write the context file", err, l.SessionID)
	}
	start, resume := seatCommands(&s.SeatDeclared)
	tmpl := start
	if p.Action == ActionResume {
		tmpl = resume
	}
	cmd := render(tmpl, vars)
	if p.Evidence == nil {
		p.Evidence = &events.SeatEvidence{}
	}
	p.Evidence.Command = cmd
	env := map[string]string{"AWR_PROJECT": m.Dir, "AWR_SEAT": s.Address, "AWR_SESSION": l.SessionID, "AWR_WORK": s.Work,
		"AWR_CONTEXT_FILE": file, "AWR_CONVERSATION": p.Conversation}
	if m.AwrBin != "" {
		env["AWR_BIN"] = m.AwrBin
	}
	if err := m.Tmux.Kill(ctx, name); err != nil {
		return fail("tmux error", err, l.SessionID)
	}
	script := launchScript(m.agentPath(), cmd, file)
	if err := m.Tmux.NewSession(ctx, name, m.seatDir(s.Cwd), env, script); err != nil {
		return fail("tmux error: "+err.Error(), err, l.SessionID)
	}
	return nil
}

// launchFailed records that p's launch failed for reason (err, when
// there is one): its new session, if it started one, is ended abandoned,
// and the plan's outcome is failed with no action. It returns an error
// only when the session could not be ended.
func (m *Manager) launchFailed(ctx context.Context, p *SeatPlan, reason string, err error, session string) error {
	if session != "" {
		if _, eerr := commands.EndSession(ctx, m.Env, commands.EndRequest{SessionID: session, Outcome: events.OutcomeAbandoned,
			Reason: "launch failed", Agent: p.seat.seat.Address}); eerr != nil && !fault.Is(eerr, fault.InvalidTransition) {
			return eerr
		}
	}
	p.Action, p.Outcome, p.Reason, p.SessionID = ActionNone, events.SeatFailed, reason, session
	if p.Evidence == nil {
		p.Evidence = &events.SeatEvidence{}
	}
	if err != nil {
		p.Evidence.Error = err.Error()
	}
	return nil
}

func statusText(status int) string {
	if status < 0 {
		return "status unknown"
	}
	return fmt.Sprintf("status %d", status)
}

// launchScript is the shell script a seat's pane runs: cmd, with PATH
// set to path (tmux gives a new session the PATH of its client, so the
// command sets its own and the agent finds awr and its program).
//
// The script leaves cmd's exit status next to the context file: tmux
// records a dead pane's status only when it reaps the process, which can
// lag or, rarely, never happen. Then the shell keeps the pane's terminal
// open until awr has read the pane (paneRead) or for at most 20 s: when a
// pane dies tmux drops what it has not yet read of the terminal, so an
// agent that prints why it failed and exits at once would, now and then,
// leave an empty tail.
func launchScript(path, cmd, contextFile string) string {
	return "export PATH=" + shellwords.Quote(path) + "\n" + cmd + "\nawr_status=$?\n" +
		"printf '%s\\n' \"$awr_status\" > " + shellwords.Quote(exitFile(contextFile)) + "\n" +
		"awr_wait=0\nwhile [ ! -e " + shellwords.Quote(readFile(contextFile)) + " ] && [ $awr_wait -lt 200 ]; do sleep 0.1 2>/dev/null || sleep 1; awr_wait=$((awr_wait+1)); done\n" +
		"exit $awr_status\n"
}

// exitFile is where a launch's command leaves its exit status.
func exitFile(contextFile string) string {
	return strings.TrimSuffix(contextFile, ".md") + ".exit"
}

// readFile is where awr says it has read the pane of a launch whose
// command exited, so the launch's shell may end.
func readFile(contextFile string) string {
	return strings.TrimSuffix(contextFile, ".md") + ".read"
}

// paneRead lets the shell of a launch whose command exited end: awr has
// read its pane. Only a context file in the project's seats directory
// (where launch writes them) gets one; a file that cannot be written
// leaves the shell to end on its own, later.
func (m *Manager) paneRead(contextFile string) {
	if contextFile == "" {
		return
	}
	if file, err := pathcheck.Inside(filepath.Join(m.Dir, ".awr", "seats"), contextFile); err == nil {
		_ = os.WriteFile(readFile(file), nil, 0o600)
	}
}

// exitStatus is the status a launch's command left in its exit file, if
// it has exited.
func exitStatus(ctx context.Context, contextFile string) (int, bool) {
	if contextFile == "" {
		return 0, false
	}
	b, err := pathcheck.ReadFile(ctx, exitFile(contextFile), 64)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return n, err == nil
}

// keepKnowledge tells a seat's agent how a checkpoint keeps what its
// successor needs. Every flag is repeatable; what a checkpoint does not
// mention stays as it was.
const keepKnowledge = `## Keep what a successor needs

Add these to the checkpoint, each as often as needed; what you do not mention stays as it was:

- --open-loop 'TEXT': an unfinished thread; it stays open until you resolve or drop it.
- --resolve-loop ID=HOW: a loop you finished, and how.
- --drop-loop ID=WHY: a loop that will not be done, and why.
- --decision 'TEXT': a choice a successor must keep.
- --fact 'TEXT': something the work established.
- --hypothesis 'TEXT': something you believe but have not checked; --confirm ID once checked.
- --retract ID=WHY: a decision, fact or hypothesis found wrong.
- --supersede ID='TEXT': a new version of a decision, fact or hypothesis.

`

// restatementShape is the JSON a resumed agent writes to restatement.json
// for the restatement check.
const restatementShape = "restatement.json restates the packet in your own reading:\n\n" +
	"    {\"next_action\": \"...\", \"open_loops\": [\"L-1\", ...], \"decisions\": [\"D-1\", ...], \"files_touched\": [\"path\", ...], \"remaining_check\": \"...\"}\n\n"

// contextFile is what the agent is given: how to report and checkpoint,
// what a checkpoint keeps for a successor, how to prove a resume,
// then the compiled context.
func contextFile(s *projections.Seat, session, conv, project, attention, packet string) string {
	host := s.Runtime
	id := conv
	if id == "" {
		id = "<your conversation id>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# awr seat %s\n\n", s.Address)
	fmt.Fprintf(&b, "You work in seat %s on %s, in awr session %s.\n\n", s.Address, s.Work, session)
	if attention != "" {
		fmt.Fprintf(&b, "## Your seat needs attention\n\nThis restore asks a person to look before work continues: %s.\n"+
			"Report your conversation id as below, then do not change the repository until a person has answered with:\n\n    %s\n\n",
			attention, clearHint(s.Address))
	}
	// claude, codex and gemini conversations are named as the host
	// reports them; any other host's as HOST:ID (see client bind).
	external := host + ":" + id
	if host == "claude" || host == "codex" || host == "gemini" {
		external = id
	}
	fmt.Fprintf(&b, "First, report your conversation id:\n\n    awr --project %s client bind --client %s --external-session %s --work %s --session %s\n\n",
		shellwords.Quote(project), host, external, s.Work, session)
	fmt.Fprintf(&b, "Checkpoint when you finish a step, and whenever you are asked to stop:\n\n    awr --project %s session checkpoint --session %s --agent %s --digest 'WHAT YOU DID' --next-action 'WHAT COMES NEXT'\n\n",
		shellwords.Quote(project), session, s.Address)
	b.WriteString(keepKnowledge)
	fmt.Fprintf(&b, "When you resume: read the packet below, then prove you understood it:\n\n    awr --project %s recovery verify --session %s --input restatement.json\n\n%s",
		shellwords.Quote(project), session, restatementShape)
	b.WriteString("---\n\n")
	b.WriteString(packet)
	return b.String()
}

// verify waits for each launched agent to report its conversation id, and
// records each seat's outcome as soon as it is known.
func (m *Manager) verify(ctx context.Context, rig, restoreID string, pending []*SeatPlan) error {
	start := time.Now()
	timeoutOf := func(p *SeatPlan) time.Duration {
		if d, ok := m.SeatVerifyTimeout[p.seat.seat.Address]; ok && d > 0 {
			return d
		}
		if m.VerifyTimeout > 0 {
			return m.VerifyTimeout
		}
		return 30 * time.Second
	}
	for len(pending) > 0 {
		var next []*SeatPlan
		for _, p := range pending {
			timeout := timeoutOf(p)
			done, err := m.check(ctx, p, time.Since(start) > timeout, timeout)
			if err != nil {
				return err
			}
			if !done {
				next = append(next, p)
				continue
			}
			if err := m.record(ctx, restoreID, rig, p); err != nil {
				return err
			}
			if p.tellPane != "" {
				m.tellAttention(ctx, p.tellPane, p.Address, p.tellWhy)
			}
		}
		pending = next
		if len(pending) > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(m.poll()):
			}
		}
	}
	return nil
}

// check decides a launched seat's outcome if it can be told yet: the agent
// reported (by id, read from the log), its command exited, or time ran out.
func (m *Manager) check(ctx context.Context, p *SeatPlan, expired bool, timeout time.Duration) (bool, error) {
	s := &p.seat.seat
	var cur *projections.Seat
	if err := m.Env.Store.Read(ctx, func(r *events.Reader) error {
		var err error
		cur, err = projections.SeatAt(r.Conn, s.Address, r.Head)
		return err
	}); err != nil {
		return false, err
	}
	if cur == nil {
		return false, fault.New(fault.NotFound, "rig up: seat %s was removed during the restore", s.Address)
	}
	p.SessionID = cur.SessionID
	name := cur.TmuxSession
	if p.Evidence == nil {
		p.Evidence = &events.SeatEvidence{}
	}
	ev := p.Evidence
	resume := cur.LaunchMode == events.LaunchResume
	if cur.Conversation != "" {
		return true, m.reported(ctx, p, cur)
	}
	pane, perr := m.Tmux.Pane(ctx, name)
	exited := false
	if perr == nil && !pane.StatusKnown {
		// The exit file says the command exited even while its shell
		// still holds the pane open for awr to read it.
		if n, ok := exitStatus(ctx, cur.ContextFile); ok {
			pane.Dead, pane.Status, pane.StatusKnown, exited = true, n, true, true
		}
	}
	if perr == nil && pane.Dead && !pane.StatusKnown {
		// Give tmux and the shell a moment to record the status.
		if p.deadSince.IsZero() {
			p.deadSince = time.Now()
		}
		if time.Since(p.deadSince) < 2*time.Second && !expired {
			return false, nil
		}
	}
	if perr != nil || pane.Dead {
		if exited {
			ev.PaneTail = m.Tmux.SettledTail(ctx, name, 10)
			m.paneRead(cur.ContextFile)
		} else {
			ev.PaneTail = m.Tmux.Tail(ctx, name, 10)
		}
		if perr != nil {
			ev.Error = perr.Error()
			return true, m.stop(ctx, p, cur, events.SeatFailed, "the agent's tmux session is gone before it reported")
		}
		status := pane.Status
		if !pane.StatusKnown {
			status = -1
			ev.Error = "exit status unknown"
		} else {
			ev.ExitStatus = &status
		}
		switch {
		case status == 127:
			return true, m.stop(ctx, p, cur, events.SeatFailed, "command not found (exit status 127)")
		case status == 126:
			return true, m.stop(ctx, p, cur, events.SeatFailed, "command not executable (exit status 126)")
		case resume:
			ev.ExpectedConv = cur.ExpectedConversation
			return true, m.stop(ctx, p, cur, events.SeatAwaitingDecision,
				fmt.Sprintf("the resume command exited (%s) without re-binding conversation %s", statusText(status), cur.ExpectedConversation))
		}
		return true, m.stop(ctx, p, cur, events.SeatFailed, fmt.Sprintf("the agent exited (%s) before reporting its conversation", statusText(status)))
	}
	if !expired {
		return false, nil
	}
	ev.PaneTail, ev.VerifyTimeoutMS = m.Tmux.Tail(ctx, name, 10), timeout.Milliseconds()
	ev.ExpectedConv = cur.ExpectedConversation
	p.Outcome = events.SeatAttentionRequired
	p.Reason = fmt.Sprintf("the agent is running but did not report its conversation within %s; look at tmux session %s", timeout, name)
	p.tellPane, p.tellWhy = name, fmt.Sprintf("awr did not see your conversation id within %s", timeout)
	return true, nil
}

// reported decides the outcome of a launched seat whose agent reported
// its conversation: resumed, freshly primed, attention required, or a
// decision to take when a resume came back with another conversation.
func (m *Manager) reported(ctx context.Context, p *SeatPlan, cur *projections.Seat) error {
	ev, name := p.Evidence, cur.TmuxSession
	resume := cur.LaunchMode == events.LaunchResume
	reported := cur.Conversation
	if resume && reported != cur.ExpectedConversation {
		ev.ExpectedConv, ev.ReportedConv, ev.PaneTail = cur.ExpectedConversation, reported, m.Tmux.SettledTail(ctx, name, 10)
		p.Conversation = cur.ExpectedConversation
		return m.stop(ctx, p, cur, events.SeatAwaitingDecision,
			fmt.Sprintf("the agent came back with conversation %s, not %s: the original conversation was not resumed", reported, cur.ExpectedConversation))
	}
	p.Conversation = reported
	if p.attention {
		ev.PaneTail = m.Tmux.SettledTail(ctx, name, 10)
		p.Outcome = events.SeatAttentionRequired
		p.tellPane, p.tellWhy = name, p.attnWhy
		return nil
	}
	switch {
	case resume:
		p.Outcome, p.Reason = events.SeatResumed, "conversation "+reported+" resumed and re-bound"
	case p.Action == ActionVerify:
		p.Outcome, p.Reason = events.SeatFreshPrimed, "conversation "+reported+" started, primed with the compiled context"
	default:
		// Keep why it was fresh (first launch, policy, decision) and
		// name the conversation the agent reported.
		p.Outcome, p.Reason = events.SeatFreshPrimed, p.Reason+" (conversation "+reported+")"
	}
	return nil
}

// clearHint is the command that answers a seat's attention_required.
func clearHint(address string) string {
	return fmt.Sprintf("awr seat clear-attention %s --reason 'WHAT YOU CHECKED'", address)
}

// AttentionMessage is typed into the pane of an agent left running with
// attention_required ({seat}, {rig} and {why} are filled in). It is one
// line, and asks for nothing the agent must record.
const AttentionMessage = "awr: seat {seat} needs a person's attention before work continues: {why}. Do not change the repository until a person answers with awr seat clear-attention {seat}; awr rig ps {rig} shows the seat's state"

// tellAttention types why the seat needs attention into the agent's
// pane, after the outcome is recorded. A pane that cannot be typed into keeps the outcome: the reason is
// in the log and in rig ps.
func (m *Manager) tellAttention(ctx context.Context, tmux, address, why string) {
	_, rig, _ := strings.Cut(address, "@")
	msg := renderText(AttentionMessage, map[string]string{"seat": address, "rig": rig, "why": why})
	_ = m.Tmux.SendLine(ctx, tmux, msg)
}

// stop leaves nothing running for a seat that did not make it: its tmux
// session is killed and its new session ended (interrupted when a person
// must decide, abandoned when the launch failed).
func (m *Manager) stop(ctx context.Context, p *SeatPlan, cur *projections.Seat, outcome, reason string) error {
	p.Outcome, p.Reason = outcome, reason
	if outcome == events.SeatAwaitingDecision {
		p.Hint = fmt.Sprintf("awr rig up %s --fresh %s", cur.Rig, cur.Address)
	}
	if err := m.Tmux.Kill(ctx, cur.TmuxSession); err != nil {
		p.Evidence.Error = strings.TrimSpace(p.Evidence.Error + "; " + err.Error())
	}
	if cur.SessionActive {
		end := events.OutcomeAbandoned
		if outcome == events.SeatAwaitingDecision {
			end = events.OutcomeInterrupted
		}
		if _, err := commands.EndSession(ctx, m.Env, commands.EndRequest{SessionID: cur.SessionID, Outcome: end, Reason: reason, Agent: cur.Address}); err != nil && !fault.Is(err, fault.InvalidTransition) {
			return err
		}
	}
	return nil
}

// record appends the seat's outcome.
func (m *Manager) record(ctx context.Context, restoreID, rig string, p *SeatPlan) error {
	for i, line := range p.Evidence.PaneTailOrNil() {
		// The pane is the agent's screen: a credential on it must not
		// enter the log.
		if f, ok := secret.Find(line); ok {
			p.Evidence.PaneTail[i] = "[line withheld: it looks like a " + f.Kind + "]"
		}
	}
	recorded, outcome, reason, err := commands.RecordSeatRestored(ctx, m.Env, events.SeatRestored{
		RestoreID: restoreID, Address: p.Address, Rig: rig, Outcome: p.Outcome, Reason: p.Reason,
		SessionID: p.SessionID, Conversation: p.Conversation, Evidence: p.Evidence})
	if err != nil {
		return err
	}
	if !recorded {
		// Another up continuing this attempt recorded the seat first: report
		// what the log says.
		p.Outcome, p.Reason = outcome, "recorded by another rig up: "+reason
	}
	m.restored++
	m.crash("seat_restored:" + strconv.Itoa(m.restored))
	return nil
}
