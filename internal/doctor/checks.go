package doctor

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/anchor"
	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/internal/hosts"
	"github.com/awr-dev/awr/internal/idle"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/rig"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/projections"
)

// Sessions reports, at rev for a reader at now and given the project's
// lease ttl, the sessions whose claim lapsed while they were active (to
// resume: idle.Lapsed) and, apart from those, the stale ones (to end:
// idle.Stale).
func Sessions(r *events.Reader, rev, now, ttl int64, add func(Finding)) error {
	active, err := projections.ActiveSessionsAt(r.Conn, rev, true)
	if err != nil {
		return err
	}
	stale, err := idle.Stale(r, rev, now, ttl, active)
	if err != nil {
		return err
	}
	// A session that died with its work unsaved is resumed, not
	// ended: its finding comes first of the warnings, and it gets no
	// stale_session finding whose repair would abandon it.
	lapsed, _, err := idle.Lapsed(r, rev, now, true, 0)
	if err != nil {
		return err
	}
	for _, l := range lapsed {
		add(Finding{Code: FindingClaimLapsed, Severity: SeverityWarning, Subject: l.ID,
			Message: fmt.Sprintf("session %s on %s (%s) is active but its claim %s lapsed at %s: %s; resume it before starting anything on %s",
				l.ID, l.Work, l.Agent, l.ClaimID, time.UnixMilli(l.ExpiredAt).UTC().Format(time.RFC3339), l.Unsaved(), l.Work),
			Repair: l.ResumeCommand})
		delete(stale, l.ID)
	}
	for _, id := range slices.Sorted(maps.Keys(stale)) {
		s := stale[id]
		add(Finding{Code: FindingStaleSession, Severity: SeverityWarning, Subject: id,
			Message: fmt.Sprintf("session %s on %s (%s) holds nothing and has been idle since seq %d, past the lease", id, s.Work, s.Agent, s.LastEventSeq),
			Repair:  fmt.Sprintf("awr doctor repair end-session %s --reason 'WHAT YOU CHECKED'", id)})
	}
	return nil
}

// Projections reports the projections whose last folded seq is not the
// log's head (repair: awr replay).
func Projections(r *events.Reader, add func(Finding)) error {
	states, err := events.ProjectionStates(r.Conn)
	if err != nil {
		return err
	}
	for _, s := range states {
		if s.LastSeq != r.Head {
			add(Finding{Code: FindingProjectionBehind, Severity: SeverityError, Subject: s.Name,
				Message: fmt.Sprintf("projection %s is at seq %d, the log at %d", s.Name, s.LastSeq, r.Head), Repair: "awr replay"})
		}
	}
	return nil
}

// Executions reports, of the executions xs, those started whose process
// died without a finish (and which no retry took over): they may or may
// not have had their effect. It looks at processes, so the door calls it
// outside its read.
func Executions(xs []projections.Execution, add func(Finding)) {
	for _, x := range xs {
		if x.State != projections.ExecStarted {
			continue
		}
		if v := exec.ViewOf(&x, true, nil); v.State == exec.Unknown && x.RetriedBy == "" {
			add(Finding{Code: FindingExecutionUnknown, Severity: SeverityWarning, Subject: x.ID,
				Message: fmt.Sprintf("execution %s (%s on %s) started at seq %d and its process died without a finish: it may or may not have had its effect", x.ID, x.Key, x.Work, x.StartedSeq),
				Repair:  fmt.Sprintf("awr doctor repair abandon-execution %s --reason 'WHAT YOU CHECKED'", x.ID)})
		}
	}
}

// AgentGone is, of a rig's seats, those whose tmux pane is known not to
// run while the seat still has a session (a machine restart).
func AgentGone(seats []*rig.PsSeat) []*rig.PsSeat {
	var gone []*rig.PsSeat
	for _, s := range seats {
		if s.TmuxAlive != nil && !*s.TmuxAlive && s.SessionID != "" {
			gone = append(gone, s)
		}
	}
	return gone
}

// Seats reports the live claims held by the sessions of seats whose agent
// is gone (AgentGone): the claim holds the work for an agent that will
// never renew or release it until its lease runs out.
func Seats(r *events.Reader, rev, now int64, gone []*rig.PsSeat, add func(Finding)) error {
	for _, s := range gone {
		c, err := projections.LiveClaimAt(r.Conn, s.Work, rev, now, true)
		if err != nil {
			return err
		}
		if c == nil || c.SessionID != s.SessionID {
			continue
		}
		_, rigName, _ := commands.ParseAddress(s.Address)
		add(Finding{Code: FindingClaimAgentGone, Severity: SeverityWarning, Subject: c.ID,
			Message: fmt.Sprintf("claim %s on %s is held by seat %s's session %s, whose agent is not running (restore the rig, or release the claim)", c.ID, c.Work, s.Address, s.SessionID),
			Repair:  "awr rig up " + rigName})
	}
	return nil
}

// Sources reports the manifest sources of the project in dir that are
// missing, changed since they were indexed, or indexed with issues.
func Sources(ctx context.Context, dir string, st *events.Store, add func(Finding)) {
	m, ok, err := intake.ReadManifest(dir)
	if err != nil {
		add(Finding{Code: FindingSourceMissing, Severity: SeverityError, Subject: intake.ManifestPath(dir), Message: err.Error(), Repair: "awr intake inspect"})
		return
	}
	if !ok || st == nil {
		return
	}
	_ = st.Read(ctx, func(r *events.Reader) error {
		indexed, err := projections.SourcesAt(r.Conn, r.Head, true)
		if err != nil {
			return err
		}
		for _, s := range intake.Compare(dir, m, indexed) {
			switch s.Freshness {
			case intake.Missing:
				add(Finding{Code: FindingSourceMissing, Severity: SeverityError, Subject: s.Path,
					Message: s.Path + " is in the manifest but cannot be read", Repair: "awr source list"})
			case intake.Stale, intake.New:
				add(Finding{Code: FindingSourceStale, Severity: SeverityWarning, Subject: s.Path,
					Message: s.Path + " changed since it was indexed (or was never indexed): claims and compiles refuse until it is", Repair: "awr source reindex"})
			}
			if s.Issues > 0 {
				add(Finding{Code: FindingSourceIssues, Severity: SeverityInfo, Subject: s.Path,
					Message: fmt.Sprintf("%s was indexed with %d issue(s)", s.Path, s.Issues), Repair: "awr intake inspect"})
			}
		}
		return nil
	})
}

// Hooks reports hosts whose conversations are bound in this project
// (clients) but whose settings (project or user; target names the file
// of a host and scope) hold none of awr's hooks, so a compaction or a new
// conversation does not get its packet; and hosts whose settings hold
// awr's hooks but none of which ran here yet (last, from HooksRan): Codex
// runs a hook only once a person trusted it in /hooks (a warning), the
// others from their next conversation (a note). It returns, per host
// with awr's hooks installed, where and when one last ran.
func Hooks(clients map[string]bool, last map[string]*Hook, target func(client, scope string) (string, error), add func(Finding)) []Hook {
	var out []Hook
	for _, h := range hosts.Hosts() {
		var installed []string
		for _, scope := range []string{string(hosts.Project), string(hosts.User)} {
			path, err := target(string(h), scope)
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
				add(Finding{Code: FindingHooksMissing, Severity: SeverityWarning, Subject: string(h),
					Message: fmt.Sprintf("%s conversations are bound here, but neither its project nor its user settings hold awr's hooks", h),
					Repair:  fmt.Sprintf("awr client install --client %s", h)})
			}
			continue
		}
		d := Hook{Client: string(h)}
		if l := last[string(h)]; l != nil {
			d = *l
		}
		d.Installed = installed
		out = append(out, d)
		if d.LastRanAt != "" {
			continue
		}
		f := Finding{Code: FindingHooksNeverRan, Severity: SeverityInfo, Subject: string(h),
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

// ranTail bounds how much of the end of the ran log HooksRan reads.
const ranTail = 256 << 10

// HooksRan returns, per host, the latest line of the ran log at path
// (.awr/hooks.log.ran; its last ranTail bytes, of a file the hooks keep
// under logLimit): when a hook of it last ran here, and which.
func HooksRan(ctx context.Context, path string, logLimit int64) map[string]*Hook {
	last := map[string]*Hook{}
	f, err := pathcheck.Open(path, logLimit+ranTail)
	if err != nil {
		return last
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > ranTail {
		f.Seek(fi.Size()-ranTail, io.SeekStart)
	}
	data, _ := pathcheck.ReadAll(ctx, f, ranTail, filepath.Base(path))
	for _, line := range strings.Split(string(data), "\n") {
		w := strings.Fields(line)
		if len(w) != 3 {
			continue
		}
		if _, err := time.Parse(time.RFC3339, w[0]); err != nil {
			continue
		}
		last[w[1]] = &Hook{Client: w[1], LastRanAt: w[0], LastEvent: w[2]}
	}
	return last
}

// diagnostics is what .awr/hooks.log keeps of one host's hook events
// that were not answered.
type diagnostics struct {
	count       int
	first, last string // RFC 3339, UTC
	lastLine    string
}

// Unanswered reports, per host, the hook events the hook log in awrDir
// (.awr/hooks.log, and hooks.log.1 before it; the hooks keep each under
// logLimit) records as not answered: how many, since when, and the
// latest. It is a warning while the latest hook of the host that ran here
// (ran, from HooksRan) is not later than that one, a note once one ran
// since. The count and the latest also go to the host's entry in hooks,
// where awr's hooks are installed.
func Unanswered(ctx context.Context, awrDir string, logLimit int64, ran map[string]*Hook, hooks []Hook, add func(Finding)) {
	diag := hookDiagnostics(ctx, awrDir, logLimit)
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
		f := Finding{Code: FindingHooksNotAnswered, Severity: SeverityWarning, Subject: string(h),
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

// hookDiagnostics reads hooks.log.1 and hooks.log in awrDir (each at most
// logLimit+ranTail bytes, the end of a longer one) and returns, per
// host, what they keep of its hook events that were not answered. A line
// that does not start with a time and a host is skipped.
func hookDiagnostics(ctx context.Context, awrDir string, logLimit int64) map[string]*diagnostics {
	out := map[string]*diagnostics{}
	max := logLimit + ranTail
	for _, name := range []string{"hooks.log.1", "hooks.log"} {
		f, err := pathcheck.Open(filepath.Join(awrDir, name), -1)
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
				d = &diagnostics{first: w[0]}
				out[w[1]] = d
			}
			d.count++
			d.last, d.lastLine = w[0], line
		}
	}
	return out
}

// Permissions reports a project directory (dir's .awr) or database that
// other users may write (anyone could rewrite the log's history or
// projections behind awr) or that awr itself cannot write; each repair
// names the path as one shell word (shellwords.Quote).
func Permissions(dir string, add func(Finding)) {
	for _, path := range []string{filepath.Join(dir, ".awr"), events.DBPath(dir)} {
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		if fi.Mode().Perm()&0o002 != 0 {
			add(Finding{Code: FindingPermissions, Severity: SeverityError, Subject: path,
				Message: fmt.Sprintf("%s is writable by every user (mode %v)", path, fi.Mode().Perm()), Repair: "chmod o-w " + shellwords.Quote(path)})
		}
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil { // never waits on a FIFO
			add(Finding{Code: FindingPermissions, Severity: SeverityError, Subject: path,
				Message: fmt.Sprintf("%s cannot be read: %v", path, err), Repair: "chmod u+rw " + shellwords.Quote(path)})
		} else {
			f.Close()
		}
	}
}

// Anchors reports, for a project (in dir) whose repository holds anchors
// of it, a latest anchor far behind the head (anchor.Behind).
// A project without a repository or without anchors has nothing to say;
// an anchor file the user keeps elsewhere is not known to doctor.
func Anchors(ctx context.Context, dir string, st *events.Store, add func(Finding)) {
	g, err := anchor.OpenRepo(ctx, dir, "doctor")
	if err != nil {
		return
	}
	anchors, _, err := g.ReadNotes(ctx)
	if err != nil || len(anchors) == 0 || st == nil {
		return
	}
	_ = st.Read(ctx, func(r *events.Reader) error {
		if r.Head == 0 {
			return nil
		}
		latest, err := anchor.Behind(r, anchors)
		if err != nil || latest == nil {
			return err
		}
		behind := r.Head - latest.Seq
		add(Finding{Code: FindingAnchorBehind, Severity: SeverityInfo, Subject: latest.Where,
			Message: fmt.Sprintf("the latest anchor of this project (%s, seq %d, taken %s) is %d event(s) behind the head (seq %d): a rewrite of what came after it would not be caught", latest.Where, latest.Seq, latest.At, behind, r.Head),
			Repair:  "awr anchor"})
		return nil
	})
}
