package project

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/internal/hosts"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/projections"
)

// Finding severities, worst first.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// The findings awr doctor reports.
const (
	FindingProjectionBehind = "projection_behind"
	FindingClaimLapsed      = "claim_lapsed"
	FindingStaleSession     = "stale_session"
	FindingClaimAgentGone   = "claim_agent_gone"
	FindingSourceMissing    = "source_missing"
	FindingSourceStale      = "source_stale"
	FindingSourceIssues     = "source_issues"
	FindingHooksMissing     = "hooks_not_installed"
	FindingHooksNeverRan    = "hooks_never_ran"
	FindingHooksNotAnswered = "hooks_not_answered"
	FindingExecutionUnknown = "execution_unknown"
	FindingPermissions      = "permissions"
)

// DoctorFinding is one problem awr doctor found: what, how bad, the id it is
// about and the complete command that repairs it.
type DoctorFinding struct {
	Code     string `json:"code"`
	Severity string `json:"severity"`
	Subject  string `json:"subject,omitempty"`
	Message  string `json:"message"`
	Repair   string `json:"repair"`
}

// DoctorRequest is `awr doctor` and awr_doctor.
type DoctorRequest struct{}

// DoctorResult is `awr doctor`: the findings, worst first, and how many of
// each severity.
type DoctorResult struct {
	OK              bool            `json:"ok"`
	Findings        []DoctorFinding `json:"findings"`
	Counts          map[string]int  `json:"counts"`
	ProjectRevision int64           `json:"project_revision"`
	// Store reports the shared store of a team checkout (absent for a
	// project whose log is its own file).
	Store *StoreHealth `json:"store,omitempty"`
	// Hooks are, per host whose settings hold awr's hooks, where they are
	// installed and when one last ran in this project.
	Hooks []DoctorHook `json:"hooks,omitempty"`
}

// DoctorHook is one host's hooks as awr doctor sees them.
type DoctorHook struct {
	Client string `json:"client"`
	// Installed are the settings files holding awr's hooks.
	Installed []string `json:"installed"`
	// LastRanAt is when a hook of the host last ran here (RFC 3339, UTC;
	// "" when none did, as far as the end of .awr/hooks.log.ran tells),
	// and LastEvent which (awr's name, such as session_start).
	LastRanAt string `json:"last_ran_at"`
	LastEvent string `json:"last_event,omitempty"`
	// NotAnswered counts the host's hook events that reached this
	// project and got the host's empty answer (a payload of a shape awr
	// does not know, a refusal, an error), as far as .awr/hooks.log and
	// hooks.log.1 keep them; LastNotAnswered is the latest one's line
	// there (when, the host, its event, the conversation, why).
	NotAnswered     int    `json:"not_answered,omitempty"`
	LastNotAnswered string `json:"last_not_answered,omitempty"`
}

// ranTail bounds how much of the end of .awr/hooks.log.ran doctor reads.
const ranTail = 256 << 10

// Doctor looks for what keeps a project from continuing cleanly, reading
// only: projections behind the log, sessions whose claim lapsed while
// they were active (repair: the command that resumes them), stale sessions, live claims whose
// seat's agent is gone, sources missing, changed or with issues, hosts in
// use without awr's hooks, hook events that got no answer (the
// diagnostics of .awr/hooks.log), executions whose process died without a
// finish, and a project directory or database others may write. Each
// finding names the command that repairs it. ok is false when there is an
// error or a warning.
// Errors: NotFound for a directory without a project.
func (p *Project) Doctor(ctx context.Context, _ DoctorRequest) (*DoctorResult, error) {
	res := &DoctorResult{Findings: []DoctorFinding{}, Counts: map[string]int{}}
	add := func(f DoctorFinding) { res.Findings = append(res.Findings, f) }
	ttl := p.leaseTTL()
	store, err := p.doctorStore(ctx, add)
	if err != nil {
		return nil, err
	}
	res.Store = store
	var unfinished []projections.Execution
	clients := map[string]bool{}
	err = p.read(ctx, Read{}, func(r *events.Reader, rev, now int64) error {
		res.ProjectRevision = rev
		states, err := events.ProjectionStates(r.Conn)
		if err != nil {
			return err
		}
		for _, s := range states {
			if s.LastSeq != r.Head {
				add(DoctorFinding{Code: FindingProjectionBehind, Severity: SeverityError, Subject: s.Name,
					Message: fmt.Sprintf("projection %s is at seq %d, the log at %d", s.Name, s.LastSeq, r.Head), Repair: "awr replay"})
			}
		}
		if err := doctorSessions(r, rev, now, ttl, add); err != nil {
			return err
		}
		xs, err := projections.ExecutionsAt(r.Conn, rev, "", "")
		if err != nil {
			return err
		}
		for _, x := range xs {
			if x.State == projections.ExecStarted {
				unfinished = append(unfinished, x)
			}
		}
		bs, err := projections.BindingsAt(r.Conn, rev)
		if err != nil {
			return err
		}
		for _, b := range bs {
			clients[b.Client] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, x := range unfinished {
		if v := exec.ViewOf(&x, true, nil); v.State == exec.Unknown && x.RetriedBy == "" {
			add(DoctorFinding{Code: FindingExecutionUnknown, Severity: SeverityWarning, Subject: x.ID,
				Message: fmt.Sprintf("execution %s (%s on %s) started at seq %d and its process died without a finish: it may or may not have had its effect", x.ID, x.Key, x.Work, x.StartedSeq),
				Repair:  fmt.Sprintf("awr doctor repair abandon-execution %s --reason 'WHAT YOU CHECKED'", x.ID)})
		}
	}
	if err := p.doctorSeats(ctx, add); err != nil {
		return nil, err
	}
	p.doctorSources(ctx, add)
	ran := p.hooksRan(ctx)
	res.Hooks = p.doctorHooks(clients, ran, add)
	p.doctorUnanswered(ctx, ran, res.Hooks, add)
	p.doctorPermissions(add)
	p.doctorAnchors(ctx, add)
	rank := map[string]int{SeverityError: 0, SeverityWarning: 1, SeverityInfo: 2}
	sort.SliceStable(res.Findings, func(i, j int) bool { return rank[res.Findings[i].Severity] < rank[res.Findings[j].Severity] })
	res.OK = true
	for _, f := range res.Findings {
		res.Counts[f.Severity]++
		if f.Severity != SeverityInfo {
			res.OK = false
		}
	}
	return res, nil
}

// doctorSessions reports the sessions whose claim lapsed while they were
// active (to resume) and, apart from those, the stale ones (to end).
func doctorSessions(r *events.Reader, rev, now, ttl int64, add func(DoctorFinding)) error {
	active, err := projections.ActiveSessionsAt(r.Conn, rev, true)
	if err != nil {
		return err
	}
	stale, err := staleSessions(r, rev, now, ttl, active)
	if err != nil {
		return err
	}
	// A session that died with its work unsaved is resumed, not
	// ended: its finding comes first of the warnings, and it gets no
	// stale_session finding whose repair would abandon it.
	lapsed, _, err := lapsedSessions(r, rev, now, true, 0)
	if err != nil {
		return err
	}
	for _, l := range lapsed {
		add(DoctorFinding{Code: FindingClaimLapsed, Severity: SeverityWarning, Subject: l.ID,
			Message: fmt.Sprintf("session %s on %s (%s) is active but its claim %s lapsed at %s: %s; resume it before starting anything on %s",
				l.ID, l.Work, l.Agent, l.ClaimID, time.UnixMilli(l.ExpiredAt).UTC().Format(time.RFC3339), l.Unsaved(), l.Work),
			Repair: l.ResumeCommand})
		delete(stale, l.ID)
	}
	ids := make([]string, 0, len(stale))
	for id := range stale {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		s := stale[id]
		add(DoctorFinding{Code: FindingStaleSession, Severity: SeverityWarning, Subject: id,
			Message: fmt.Sprintf("session %s on %s (%s) holds nothing and has been idle since seq %d, past the lease", id, s.Work, s.Agent, s.LastEventSeq),
			Repair:  fmt.Sprintf("awr doctor repair end-session %s --reason 'WHAT YOU CHECKED'", id)})
	}
	return nil
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
	var seats []*PsSeat
	for _, s := range list.Seats {
		if s.TmuxAlive != nil && !*s.TmuxAlive && s.SessionID != "" {
			seats = append(seats, s)
		}
	}
	if len(seats) == 0 {
		return nil
	}
	return p.read(ctx, Read{}, func(r *events.Reader, rev, now int64) error {
		for _, s := range seats {
			c, err := projections.LiveClaimAt(r.Conn, s.Work, rev, now, true)
			if err != nil {
				return err
			}
			if c == nil || c.SessionID != s.SessionID {
				continue
			}
			_, rig, _ := commands.ParseAddress(s.Address)
			add(DoctorFinding{Code: FindingClaimAgentGone, Severity: SeverityWarning, Subject: c.ID,
				Message: fmt.Sprintf("claim %s on %s is held by seat %s's session %s, whose agent is not running (restore the rig, or release the claim)", c.ID, c.Work, s.Address, s.SessionID),
				Repair:  "awr rig up " + rig})
		}
		return nil
	})
}

// doctorSources reports manifest sources that are missing, changed since
// they were indexed, or indexed with issues.
func (p *Project) doctorSources(ctx context.Context, add func(DoctorFinding)) {
	m, ok, err := intake.ReadManifest(p.dir)
	if err != nil {
		add(DoctorFinding{Code: FindingSourceMissing, Severity: SeverityError, Subject: intake.ManifestPath(p.dir), Message: err.Error(), Repair: "awr intake inspect"})
		return
	}
	if !ok {
		return
	}
	st, err := p.EventLog(ctx)
	if err != nil {
		return
	}
	_ = st.Read(ctx, func(r *events.Reader) error {
		indexed, err := projections.SourcesAt(r.Conn, r.Head, true)
		if err != nil {
			return err
		}
		for _, s := range intake.Compare(p.dir, m, indexed) {
			switch s.Freshness {
			case intake.Missing:
				add(DoctorFinding{Code: FindingSourceMissing, Severity: SeverityError, Subject: s.Path,
					Message: s.Path + " is in the manifest but cannot be read", Repair: "awr source list"})
			case intake.Stale, intake.New:
				add(DoctorFinding{Code: FindingSourceStale, Severity: SeverityWarning, Subject: s.Path,
					Message: s.Path + " changed since it was indexed (or was never indexed): claims and compiles refuse until it is", Repair: "awr source reindex"})
			}
			if s.Issues > 0 {
				add(DoctorFinding{Code: FindingSourceIssues, Severity: SeverityInfo, Subject: s.Path,
					Message: fmt.Sprintf("%s was indexed with %d issue(s)", s.Path, s.Issues), Repair: "awr intake inspect"})
			}
		}
		return nil
	})
}

// doctorHooks reports hosts whose conversations are bound in this project
// but whose settings (project or user) hold none of awr's hooks, so a
// compaction or a new conversation does not get its packet; and hosts
// whose settings hold awr's hooks but none of which ran here yet: Codex
// runs a hook only once a person trusted it in /hooks (a warning), the
// others from their next conversation (a note). It returns, per host
// with awr's hooks installed, where and when one last ran.
func (p *Project) doctorHooks(clients map[string]bool, last map[string]*DoctorHook, add func(DoctorFinding)) []DoctorHook {
	var out []DoctorHook
	for _, h := range hosts.Hosts() {
		var installed []string
		for _, scope := range []string{string(hosts.Project), string(hosts.User)} {
			_, _, path, err := p.hostTarget(string(h), scope)
			if err != nil {
				continue
			}
			data, err := pathcheck.ReadFile(context.Background(), path, hosts.MaxSettings)
			if err != nil {
				continue
			}
			if out, err := hosts.Uninstall(h, data); err == nil && !bytes.Equal(out, data) {
				installed = append(installed, path)
			}
		}
		if len(installed) == 0 {
			if clients[string(h)] {
				add(DoctorFinding{Code: FindingHooksMissing, Severity: SeverityWarning, Subject: string(h),
					Message: fmt.Sprintf("%s conversations are bound here, but neither its project nor its user settings hold awr's hooks", h),
					Repair:  fmt.Sprintf("awr client install --client %s", h)})
			}
			continue
		}
		d := DoctorHook{Client: string(h)}
		if l := last[string(h)]; l != nil {
			d = *l
		}
		d.Installed = installed
		out = append(out, d)
		if d.LastRanAt != "" {
			continue
		}
		f := DoctorFinding{Code: FindingHooksNeverRan, Severity: SeverityInfo, Subject: string(h),
			Message: fmt.Sprintf("awr's hooks for %s are installed (%s) but none has run in this project yet", h, strings.Join(installed, ", ")),
			Repair:  fmt.Sprintf("awr client install --client %s", h)}
		if h == hosts.Codex {
			f.Severity = SeverityWarning
			f.Message += ": codex runs a new or changed hook only once it is trusted; open /hooks in codex and trust awr's hooks"
		}
		add(f)
	}
	return out
}

// hooksRan returns, per host, the latest line of .awr/hooks.log.ran (its
// last ranTail bytes): when a hook of it last ran here, and which.
func (p *Project) hooksRan(ctx context.Context) map[string]*DoctorHook {
	last := map[string]*DoctorHook{}
	f, err := pathcheck.Open(filepath.Join(p.dir, ".awr", RanLog), hookLogLimit+ranTail)
	if err != nil {
		return last
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > ranTail {
		f.Seek(fi.Size()-ranTail, io.SeekStart)
	}
	data, _ := pathcheck.ReadAll(ctx, f, ranTail, RanLog)
	for _, line := range strings.Split(string(data), "\n") {
		w := strings.Fields(line)
		if len(w) != 3 {
			continue
		}
		if _, err := time.Parse(time.RFC3339, w[0]); err != nil {
			continue
		}
		last[w[1]] = &DoctorHook{Client: w[1], LastRanAt: w[0], LastEvent: w[2]}
	}
	return last
}

// hookDiagnostics is what .awr/hooks.log keeps of one host's hook events
// that were not answered.
type hookDiagnostics struct {
	count       int
	first, last string // RFC 3339, UTC
	lastLine    string
}

// doctorUnanswered reports, per host, the hook events .awr/hooks.log (and
// hooks.log.1 before it) records as not answered: how many, since when,
// and the latest. It is a warning while the latest hook of the host that
// ran here (hooks.log.ran) is not later than that one, a note once one
// ran since. The count and the latest also go to the host's entry in
// hooks, where awr's hooks are installed.
func (p *Project) doctorUnanswered(ctx context.Context, ran map[string]*DoctorHook, hooks []DoctorHook, add func(DoctorFinding)) {
	diag := p.hookDiagnostics(ctx)
	for i := range hooks {
		if d := diag[hooks[i].Client]; d != nil {
			hooks[i].NotAnswered, hooks[i].LastNotAnswered = d.count, d.lastLine
		}
	}
	for _, h := range hosts.Hosts() {
		d := diag[string(h)]
		if d == nil {
			continue
		}
		f := DoctorFinding{Code: FindingHooksNotAnswered, Severity: SeverityWarning, Subject: string(h),
			Message: fmt.Sprintf("%d hook event(s) of %s got no answer here since %s (.awr/hooks.log; a payload of a shape this awr does not know, from a newer %s, is one cause); the latest: %s",
				d.count, h, d.first, h, d.lastLine),
			Repair: fmt.Sprintf("awr client install --client %s", h)}
		if r := ran[string(h)]; r != nil && r.LastRanAt > d.last {
			f.Severity = SeverityInfo
			f.Message += fmt.Sprintf("; a hook of %s ran here since, at %s", h, r.LastRanAt)
		}
		add(f)
	}
}

// hookDiagnostics reads .awr/hooks.log.1 and .awr/hooks.log (each at most
// hookLogLimit+ranTail bytes, the end of a longer one) and returns, per
// host, what they keep of its hook events that were not answered. A line
// that does not start with a time and a host is skipped.
func (p *Project) hookDiagnostics(ctx context.Context) map[string]*hookDiagnostics {
	out := map[string]*hookDiagnostics{}
	const max = hookLogLimit + ranTail
	for _, name := range []string{"hooks.log.1", "hooks.log"} {
		f, err := pathcheck.Open(filepath.Join(p.dir, ".awr", name), -1)
		if err != nil {
			continue
		}
		if fi, err := f.Stat(); err == nil && fi.Size() > max {
			f.Seek(fi.Size()-max, io.SeekStart)
		}
		data, _ := pathcheck.ReadAll(ctx, f, max, name)
		f.Close()
		for _, line := range strings.Split(string(data), "\n") {
			w := strings.SplitN(line, " ", 3)
			if len(w) != 3 {
				continue
			}
			if _, err := time.Parse(time.RFC3339, w[0]); err != nil {
				continue
			}
			if _, err := hosts.ParseHost(w[1]); err != nil || w[1] != strings.ToLower(w[1]) {
				continue
			}
			d := out[w[1]]
			if d == nil {
				d = &hookDiagnostics{first: w[0]}
				out[w[1]] = d
			}
			d.count++
			d.last, d.lastLine = w[0], line
		}
	}
	return out
}

// doctorPermissions reports a project directory or database that other
// users may write (anyone could rewrite the log's history or projections
// behind awr) or that awr itself cannot write.
func (p *Project) doctorPermissions(add func(DoctorFinding)) {
	for _, path := range []string{filepath.Join(p.dir, ".awr"), events.DBPath(p.dir)} {
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		if fi.Mode().Perm()&0o002 != 0 {
			add(DoctorFinding{Code: FindingPermissions, Severity: SeverityError, Subject: path,
				Message: fmt.Sprintf("%s is writable by every user (mode %v)", path, fi.Mode().Perm()), Repair: "chmod o-w " + shellWord(path)})
		}
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil { // never waits on a FIFO
			add(DoctorFinding{Code: FindingPermissions, Severity: SeverityError, Subject: path,
				Message: fmt.Sprintf("%s cannot be read: %v", path, err), Repair: "chmod u+rw " + shellWord(path)})
		} else {
			f.Close()
		}
	}
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
