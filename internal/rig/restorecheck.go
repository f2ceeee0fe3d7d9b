package rig

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/shellwords"
)

// Check statuses: green passed; yellow, the restore goes on but a person
// must decide or look (the seat ends awaiting-decision or
// attention_required, or awr cannot tell); red, the restore cannot launch
// the seat (it ends failed) or the rig at all.
const (
	CheckGreen  = "green"
	CheckYellow = "yellow"
	CheckRed    = "red"
)

// The checks restore-check runs, per seat and for the rig.
const (
	CheckTmux         = "tmux"
	CheckSources      = "sources"
	CheckRunning      = "running"
	CheckCwd          = "cwd"
	CheckProgram      = "program"
	CheckConversation = "conversation"
	CheckRepository   = "repository"
	CheckWork         = "work"
	CheckAttention    = "attention"
	CheckHandResume   = "hand_resume"
	CheckPolicy       = "policy"
)

// Check is one thing restore-check looked at: its status, what it found
// (evidence) and, unless green, the command that answers it (remediation).
type Check struct {
	Name        string `json:"name"`
	Status      string `json:"status"`
	Evidence    string `json:"evidence"`
	Remediation string `json:"remediation,omitempty"`
}

// SeatCheck is one seat in `awr rig restore-check`: the checks, the
// worst of their statuses, and the outcome `rig up` would give it (the
// same decision as `rig up --plan`).
type SeatCheck struct {
	Address string   `json:"address"`
	Status  string   `json:"status"`
	Action  string   `json:"action"`
	Outcome string   `json:"outcome"`
	Reason  string   `json:"reason"`
	Checks  []*Check `json:"checks"`
}

// RestoreCheckResult is `awr rig restore-check`: the rig-wide checks,
// each seat's, the worst status of all and the result `rig up` would roll
// up to.
type RestoreCheckResult struct {
	Rig             string       `json:"rig"`
	Status          string       `json:"status"`
	Result          string       `json:"result"`
	Snapshot        *string      `json:"snapshot"`
	Checks          []*Check     `json:"checks"`
	Seats           []*SeatCheck `json:"seats"`
	ProjectRevision int64        `json:"project_revision"`
}

// Incomplete is nil when an up of rigName would come back fully_restored
// with no red check; otherwise the RestoreIncomplete error naming every
// check that is not green, whose hint is the first remediation of the
// worst status (else awr rig ps).
func (r *RestoreCheckResult) Incomplete(rigName string) error {
	if r.Result == FullyRestored && r.Status != CheckRed {
		return nil
	}
	var bad []string
	remedy := ""
	note := func(where string, c *Check) {
		if c.Status == CheckGreen {
			return
		}
		bad = append(bad, fmt.Sprintf("%s %s %s", where, c.Name, c.Status))
		if remedy == "" && c.Status == r.Status {
			remedy = c.Remediation
		}
	}
	for _, c := range r.Checks {
		note(rigName, c)
	}
	for _, sc := range r.Seats {
		for _, c := range sc.Checks {
			note(sc.Address, c)
		}
	}
	e := fault.New(fault.RestoreIncomplete, "rig %s would be %s: %s", rigName, r.Result, strings.Join(bad, ", ")).With("rig", rigName).With("result", r.Result).With("status", r.Status)
	if remedy == "" {
		remedy = "awr rig ps " + rigName
	}
	return e.WithHint("%s", remedy)
}

// worse returns the worse of two statuses.
func worse(a, b string) string {
	rank := map[string]int{CheckGreen: 0, CheckYellow: 1, CheckRed: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// RestoreCheck looks at everything `rig up` depends on, for each seat of
// the rig, and writes nothing: the working directory, the program, the
// conversation to resume where the runtime keeps it, the repository
// against the seat's last known state, the work's claimability, pending
// attention and hand-resumed sessions; and for the rig, tmux and the
// sources' freshness. Each seat's outcome is the one `rig up --plan`
// predicts, from the same decision.
// Errors: InvalidInput for a bad rig name; NotFound for a rig without
// seats.
func (m *Manager) RestoreCheck(ctx context.Context, rigName string) (*RestoreCheckResult, error) {
	st, err := m.loadSeats(ctx, rigName)
	if err != nil {
		return nil, err
	}
	res := &RestoreCheckResult{Rig: st.rig, Status: CheckGreen, ProjectRevision: st.head}
	if st.snapshot != nil {
		res.Snapshot = &st.snapshot.SnapshotID
	}
	add := func(c *Check) {
		res.Checks = append(res.Checks, c)
		res.Status = worse(res.Status, c.Status)
	}
	if err := m.Tmux.Available(); err != nil {
		add(&Check{Name: CheckTmux, Status: CheckRed, Evidence: "tmux not found on PATH", Remediation: "apt-get install tmux"})
	} else {
		add(&Check{Name: CheckTmux, Status: CheckGreen, Evidence: "tmux found on PATH"})
	}
	stale, err := m.Stale(ctx)
	if err != nil {
		return nil, err
	}
	if len(stale) > 0 {
		add(&Check{Name: CheckSources, Status: CheckRed, Evidence: "changed since they were indexed: " + strings.Join(stale, ", "), Remediation: "awr source reindex"})
	} else {
		add(&Check{Name: CheckSources, Status: CheckGreen, Evidence: "every source is as indexed"})
	}
	var plans []*SeatPlan
	for _, ss := range st.seats {
		p := m.decide(ctx, st, ss, false)
		plans = append(plans, p)
		sc := m.checkSeat(ctx, st, ss, p)
		res.Seats = append(res.Seats, sc)
		res.Status = worse(res.Status, sc.Status)
	}
	res.Result = rollUp(plans)
	return res, nil
}

// checkSeat runs the seat's checks; p is the plan's decision for it.
func (m *Manager) checkSeat(ctx context.Context, st *rigState, ss *seatState, p *SeatPlan) *SeatCheck {
	s := &ss.seat
	sc := &SeatCheck{Address: s.Address, Status: CheckGreen, Action: p.Action, Outcome: p.Outcome, Reason: p.Reason}
	add := func(name, status, remediation, format string, args ...any) {
		sc.Checks = append(sc.Checks, &Check{Name: name, Status: status, Evidence: fmt.Sprintf(format, args...), Remediation: remediation})
		sc.Status = worse(sc.Status, status)
	}
	if ss.alive {
		add(CheckRunning, CheckGreen, "", "its agent runs in tmux session %s: rig up launches nothing", s.TmuxSession)
	}
	if s.AttentionSeq != 0 {
		add(CheckAttention, CheckYellow, clearHint(s.Address), "the attention_required recorded at seq %d is not answered: %s", s.AttentionSeq, s.AttentionReason)
	}
	if n := len(ss.successors); n > 0 {
		add(CheckHandResume, CheckYellow, reconcileHint(s.Address), "session %s was resumed by hand as %s, which no seat has adopted", s.SessionID, ss.successors[n-1])
	}
	cwd := m.seatDir(s.Cwd)
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		add(CheckCwd, CheckRed, "mkdir -p "+shellwords.Quote(cwd), "working directory %s does not exist", cwd)
		return sc
	}
	add(CheckCwd, CheckGreen, "", "working directory %s exists", cwd)

	start, resume := seatCommands(&s.SeatDeclared)
	conv := s.LastConversation
	if ss.snap != nil {
		conv = ss.snap.Conversation
	}
	tmpl := start
	switch {
	case s.Policy == events.PolicyCheckpointOnly:
		add(CheckPolicy, CheckYellow, fmt.Sprintf("awr rig up %s --fresh %s", st.rig, s.Address), "policy checkpoint_only: nothing is launched until someone decides")
	case s.SessionID == "":
		add(CheckConversation, CheckGreen, "", "first launch: a new conversation")
	case s.Policy == events.PolicyRelaunchFresh:
		add(CheckConversation, CheckGreen, "", "policy relaunch_fresh: a new conversation primed from the last checkpoint")
	case conv == "":
		add(CheckConversation, CheckGreen, "", "the seat never reported a conversation: a new one primed from the last checkpoint")
	case resume == "":
		add(CheckConversation, CheckYellow, fmt.Sprintf("awr rig up %s --fresh %s", st.rig, s.Address), "runtime %s has no resume command, so conversation %s cannot be resumed", s.Runtime, conv)
	default:
		tmpl = resume
		switch ok, where := m.conversationExists(&s.SeatDeclared, cwd, conv, os.Getenv); {
		case !ok:
			add(CheckConversation, CheckYellow, fmt.Sprintf("awr rig up %s --fresh %s", st.rig, s.Address), "conversation %s is not in %s's store (looked for %s)", conv, s.Runtime, where)
		case where == "":
			add(CheckConversation, CheckYellow, redeclareHint(&s.SeatDeclared, "'.agent/conversations/{conversation}.json'"),
				"awr cannot tell whether conversation %s still exists: the seat declares no --conversation-store", conv)
		default:
			add(CheckConversation, CheckGreen, "", "conversation %s is kept at %s", conv, where)
		}
	}
	if prog, ok := findProgram(tmpl, cwd, m.agentPath()); !ok {
		add(CheckProgram, CheckRed, "awr seat show "+s.Address, "%s not found on the agents' PATH (from %s)", prog, tmpl)
	} else if prog == "" {
		add(CheckProgram, CheckGreen, "", "%q runs through the shell: its program is not looked up", tmpl)
	} else {
		add(CheckProgram, CheckGreen, "", "%s found on the agents' PATH", prog)
	}

	switch d := m.repoDrift(ctx, ss, cwd); {
	case ss.ref == nil:
		add(CheckRepository, CheckGreen, "", "no repository state recorded for the seat yet")
	case d.current == nil:
		add(CheckRepository, CheckYellow, "git -C "+shellwords.Quote(cwd)+" status", "%s is not a git work tree now, but the %s recorded one at %s", cwd, ss.ref.label, short(ss.ref.repo.Head))
	case d.change != "":
		add(CheckRepository, CheckYellow, clearHint(s.Address), "%s since the %s (recorded head %s dirty %t %s; now head %s dirty %t %s)",
			d.change, ss.ref.label, short(d.want.Head), d.want.Dirty, short(d.want.DirtyFingerprint), short(d.current.Head), d.current.Dirty, short(d.current.DirtyFingerprint))
	default:
		add(CheckRepository, CheckGreen, "", "matches the %s: head %s, dirty %t", ss.ref.label, short(d.current.Head), d.current.Dirty)
	}

	if ss.workIssue != "" {
		remedy := "awr ready --all"
		if s.Work == "" {
			remedy = fmt.Sprintf("awr seat add %s --runtime %s --work KEY", s.Address, s.Runtime)
		}
		add(CheckWork, CheckRed, remedy, "%s", ss.workIssue)
	} else {
		add(CheckWork, CheckGreen, "", "%s can be claimed by the seat", s.Work)
	}
	return sc
}

// redeclareHint is the seat add that keeps s's declaration and adds a
// conversation store.
func redeclareHint(d *events.SeatDeclared, store string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "awr seat add %s --runtime %s", d.Address, d.Runtime)
	for _, f := range [][2]string{{"--command", d.Command}, {"--resume-command", d.ResumeCommand}, {"--work", d.Work}, {"--cwd", d.Cwd},
		{"--policy", d.Policy}, {"--stop-message", d.StopMessage}} {
		if f[1] != "" {
			fmt.Fprintf(&b, " %s %s", f[0], shellwords.Quote(f[1]))
		}
	}
	fmt.Fprintf(&b, " --conversation-store %s", store)
	return b.String()
}
