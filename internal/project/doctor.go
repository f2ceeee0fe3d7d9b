package project

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/doctor"
	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/projections"
)

// The doctor's findings (internal/doctor holds its checks).
type (
	// DoctorFinding is one problem awr doctor found: what, how bad, the
	// id it is about and the complete command that repairs it.
	DoctorFinding = doctor.Finding
	// DoctorHook is one host's hooks as awr doctor sees them.
	DoctorHook = doctor.Hook
	// StoreHealth is what awr doctor reports of a team checkout's shared
	// store (doctor.Store).
	StoreHealth = doctor.StoreHealth
)

// Finding severities, worst first, and the findings front ends look for.
const (
	SeverityError         = doctor.SeverityError
	SeverityWarning       = doctor.SeverityWarning
	SeverityInfo          = doctor.SeverityInfo
	FindingClaimLapsed    = doctor.FindingClaimLapsed
	FindingClaimAgentGone = doctor.FindingClaimAgentGone
	// FindingHooksNotAnswered is a host's hook events that got no answer.
	FindingHooksNotAnswered = doctor.FindingHooksNotAnswered
	// FindingStoreMoved is a shared store the log moved out of.
	FindingStoreMoved = doctor.FindingStoreMoved
)

// DoctorRequest is `awr doctor` and awr_doctor.
type DoctorRequest struct {
	All bool `name:"all" json:"all,omitempty" help:"Every finding (by default at most 20 of each code, the others counted in not_listed)."`
}

// DoctorResult is `awr doctor`: the findings, worst first, and how many of
// each severity.
type DoctorResult struct {
	OK              bool            `json:"ok"`
	Findings        []DoctorFinding `json:"findings"`
	Counts          map[string]int  `json:"counts"`
	ProjectRevision int64           `json:"project_revision"`
	// FindingsTotal counts every finding (Counts by severity); without
	// All, Findings lists at most doctor.PerCode of each code and
	// NotListed counts, by code, those it leaves out.
	FindingsTotal int            `json:"findings_total"`
	NotListed     map[string]int `json:"not_listed,omitempty"`
	// Store reports the shared store of a team checkout (absent for a
	// project whose log is its own file).
	Store *StoreHealth `json:"store,omitempty"`
	// Hooks are, per host whose settings hold awr's hooks, where they are
	// installed and when one last ran in this project.
	Hooks []DoctorHook `json:"hooks,omitempty"`
}

// Doctor looks for what keeps a project from continuing cleanly, reading
// only: projections behind the log, sessions whose claim lapsed while
// they were active (repair: the command that resumes them), stale sessions, live claims whose
// seat's agent is gone, sources missing, changed or with issues, hosts in
// use without awr's hooks, hook events that got no answer (the
// diagnostics of .awr/hooks.log), executions whose process died without a
// finish, and a project directory or database others may write. Each
// finding names the command that repairs it. ok is false when there is an
// error or a warning. It lists at most doctor.PerCode findings of each
// code unless req.All, and counts the others. Its reads catch a shared
// log's cache up once (events.CatchUpOnce).
// Errors: NotFound for a directory without a project.
func (p *Project) Doctor(ctx context.Context, req DoctorRequest) (*DoctorResult, error) {
	ctx = events.CatchUpOnce(ctx)
	res := &DoctorResult{Findings: []DoctorFinding{}}
	add := func(f DoctorFinding) { res.Findings = append(res.Findings, f) }
	ttl := p.leaseTTL()
	st, err := p.EventLog(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	atOpen := p.cacheAtOpen
	p.mu.Unlock()
	if res.Store, err = doctor.Store(ctx, st, atOpen, add); err != nil {
		return nil, err
	}
	var xs []projections.Execution
	var clients map[string]bool
	err = p.read(ctx, Read{}, func(r *events.Reader, rev, now int64) error {
		res.ProjectRevision = rev
		var err error
		xs, clients, err = doctor.Log(r, rev, now, ttl, add)
		return err
	})
	if err != nil {
		return nil, err
	}
	doctor.Executions(xs, add)
	if err := p.doctorSeats(ctx, add); err != nil {
		return nil, err
	}
	res.Hooks = doctor.Files(ctx, p.dir, st, clients, add)
	res.OK, res.Counts = doctor.Rank(res.Findings)
	res.FindingsTotal = len(res.Findings)
	if !req.All {
		res.Findings, res.NotListed = doctor.Listed(res.Findings, doctor.PerCode)
	}
	return res, nil
}

// doctorSeats reports live claims of seats whose agent is gone (a machine
// restart): the claim holds the work for an agent that will never renew
// or release it until its lease runs out.
func (p *Project) doctorSeats(ctx context.Context, add func(DoctorFinding)) error {
	m, err := p.rigManager(ctx)
	if err != nil {
		return err
	}
	list, err := m.List(ctx, "", Read{})
	if err != nil {
		return err
	}
	seats := doctor.AgentGone(list.Seats)
	if len(seats) == 0 {
		return nil
	}
	return p.read(ctx, Read{}, func(r *events.Reader, rev, now int64) error {
		return doctor.Seats(r, rev, now, seats, add)
	})
}

// The repairs of `awr doctor repair`.
type (
	// RepairRequest is one `awr doctor repair` and its MCP tool.
	RepairRequest = commands.RepairRequest
	// RepairResult is the event a repair wrote.
	RepairResult = commands.RepairResult
)

// DoctorExpireClaim releases a claim no live agent will release.
// Errors: those of commands.ExpireClaim.
func (p *Project) DoctorExpireClaim(ctx context.Context, req RepairRequest) (*RepairResult, error) {
	return command(ctx, p, commands.ExpireClaim, req)
}

// DoctorEndSession ends a stale session as abandoned.
// Errors: those of commands.EndStaleSession.
func (p *Project) DoctorEndSession(ctx context.Context, req RepairRequest) (*RepairResult, error) {
	return command(ctx, p, commands.EndStaleSession, req)
}

// DoctorAbandonExecution records the finish of an execution whose process
// died, as abandoned. Errors: those of commands.AbandonExecution.
func (p *Project) DoctorAbandonExecution(ctx context.Context, req RepairRequest) (*RepairResult, error) {
	alive := false
	if err := p.read(ctx, Read{}, func(r *events.Reader, rev, _ int64) error {
		x, err := projections.ExecutionAt(r.Conn, req.ID, rev)
		if err == nil && x != nil && x.State == projections.ExecStarted {
			alive = exec.ViewOf(x, true, nil).State == exec.Running
		}
		return err
	}); err != nil {
		return nil, err
	}
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	return commands.AbandonExecution(ctx, env, req, alive)
}
