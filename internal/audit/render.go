package audit

import (
	"fmt"
	"strings"
)

// emitter is one rendering of a report: walk decides what is said and in
// which order, an emitter how it is marked up (Markdown, HTML). Labels
// and values are built with the marks of code spans, strong words and
// event references (code, bold, ref); each emitter turns them into its
// own markup and escapes everything else.
type emitter interface {
	// start opens the document: its title (with marks) and the intro.
	start(title, plainTitle, intro string)
	// summary is one line of the opening list; verdict the chain's.
	summary(label, value string)
	verdict(ok bool, text string)
	// endSummary closes the opening list.
	endSummary()
	// section opens a section of n entries ("None at this revision." for 0).
	section(title string, n int)
	// open and close wrap an entry of fields under its own heading.
	open(title string)
	close()
	// begin and end wrap a section's one-line entries (line, nested);
	// loose entries stand apart from each other.
	begin(n int, loose bool)
	end(n int)
	line(s string)
	nested(head string, subs []string)
	// The fields of an entry: a value, an agent's own text (its line
	// breaks kept), a list, knowledge in force, a repository.
	item(label, value string)
	text(label, value string)
	list(label string, values []string)
	knowledge(label string, k Knowledge)
	repo(label string, r *Repo)
	ref(r Ref) string
	bold(s string) string
}

// entries renders a section of list, each entry under its own heading
// (head) with the fields that fields gives it.
func entries[T any](e emitter, title string, list []T, head func(T) string, fields func(T)) {
	e.section(title, len(list))
	for _, x := range list {
		e.open(head(x))
		fields(x)
		e.close()
	}
}

// lines renders a section of list in one-line entries, each written by
// each (loose: set apart from each other).
func lines[T any](e emitter, title string, list []T, loose bool, each func(T)) {
	e.section(title, len(list))
	e.begin(len(list), loose)
	for _, x := range list {
		each(x)
	}
	e.end(len(list))
}

// walk renders r through e: the one order and wording of both renderings.
func walk(r *Report, e emitter) {
	e.start("Audit of "+r.Subject.Kind+" "+code(r.Subject.ID), fmt.Sprintf("Audit of %s %s", r.Subject.Kind, r.Subject.ID), r.Intro())
	e.summary("project", r.ProjectLine())
	e.summary("made at", fmt.Sprintf("project_revision %d, head hash %s%s", r.ProjectRevision, code(orNone(r.HeadHash)), suffix(", ", r.HeadAt)))
	e.verdict(r.Chain.Verified, r.Chain.Verdict())
	for _, w := range r.Work {
		e.summary("work item "+code(w.Key), w.Line())
	}
	e.summary("sessions", fmt.Sprintf("%d; claim events: %d; checkpoints: %d; resumes: %d; restatement checks: %d",
		len(r.Sessions), len(r.Claims), len(r.Checkpoints), len(r.Resumes), len(r.Restatements)))
	e.endSummary()
	walkSessions(r, e)
	lines(e, "Claims", r.Claims, false, func(c ClaimEvent) {
		e.line(fmt.Sprintf("%s: %s claim %s on %s, session %s%s", e.ref(c.Ref), e.bold(c.Event), code(c.ClaimID), code(c.Work), code(c.Session), c.Details(code)))
	})
	walkCheckpoints(r, e)
	walkResumes(r, e)
	entries(e, "Restatement checks", r.Restatements, func(rs Restatement) string { return "Restatement of " + code(rs.Session) + ": " + rs.Verdict }, func(rs Restatement) {
		e.item("checked", e.ref(rs.Ref))
		e.item("against checkpoint", codeOr(rs.CheckpointID, "none"))
		var fields []string
		for _, it := range rs.Items {
			fields = append(fields, it.Line())
		}
		e.list("fields", fields)
	})
	lines(e, "Host bindings", r.Bindings, false, func(b Binding) {
		e.line(fmt.Sprintf("%s: %s conversation %s bound to session %s on %s%s%s", e.ref(b.Ref), b.Client, code(b.ExternalSession), code(b.Session), code(b.Work),
			suffix(", at checkpoint ", codeOr(b.CheckpointID, "")), suffix(", continues ", codeOr(b.ContinuesFrom, ""))))
	})
	lines(e, "Host events", r.HostEvents, false, func(h HostEvent) {
		e.line(fmt.Sprintf("%s: %s %s (%s) for %s, session %s%s", e.ref(h.Ref), h.Client, h.Event, h.HostEvent, code(h.ExternalSession), code(h.Session), h.Details(code)))
	})
	walkExecutions(r, e)
	lines(e, "Evidence", r.Evidence, false, func(v Evidence) {
		e.line(fmt.Sprintf("%s: evidence %s on %s, criterion %q: %s, %s, %s%s%s", e.ref(v.Ref), code(v.ID), code(v.Work), oneLine(v.Criterion), v.Basis, v.Level,
			passed(v.Passed), suffix(": ", oneLine(v.Detail)), v.RepoLine(code)))
	})
	lines(e, "Work verified", r.Verifications, true, func(v Verification) {
		var subs []string
		for _, c := range v.Criteria {
			subs = append(subs, fmt.Sprintf("%q: evidence %s (%s)", oneLine(c.Criterion), code(c.EvidenceID), c.Level))
		}
		e.nested(fmt.Sprintf("%s: %s verified by session %s at level %s%s", e.ref(v.Ref), code(v.Work), code(v.Session), v.Level, repoShort(v.Repo, code)), subs)
	})
}

func walkSessions(r *Report, e emitter) {
	entries(e, "Sessions", r.Sessions, func(s Session) string { return "Session " + code(s.ID) }, func(s Session) {
		e.item("started", e.ref(s.Started))
		e.item("agent", s.AgentLine())
		e.item("work", code(s.Work))
		if s.Workdir != "" {
			e.item("workdir", code(s.Workdir))
		}
		if s.ResumedFrom != "" {
			e.item("resumed from", code(s.ResumedFrom))
		}
		if len(s.ResumedBy) > 0 {
			e.item("resumed by", codes(s.ResumedBy))
		}
		e.repo("repository at start", s.Repo)
		if s.Ended != nil {
			e.item("ended", s.Ended.Outcome+suffix(" (", s.Ended.Reason, ")")+" at "+e.ref(s.Ended.Ref))
		} else {
			e.item("ended", "not ended at this revision")
		}
	})
}

func walkCheckpoints(r *Report, e emitter) {
	entries(e, "Checkpoints", r.Checkpoints, func(c Checkpoint) string { return "Checkpoint " + code(c.ID) }, func(c Checkpoint) {
		e.item("recorded", e.ref(c.Ref))
		e.item("session", code(c.Session)+", agent "+c.Agent+", work "+code(c.Work))
		e.text("digest", c.Digest)
		e.text("next action", c.NextAction)
		e.item("context", c.ContextLine(code))
		if len(c.OpenLoopTexts) > 0 {
			e.list("open loops as written", c.OpenLoopTexts)
		}
		var changes []string
		for _, ch := range c.Changes {
			changes = append(changes, ch.Line(code))
		}
		e.list("changes", changes)
		e.knowledge("kept in force", c.Kept)
		e.repo("repository", c.Repo)
	})
}

func walkResumes(r *Report, e emitter) {
	entries(e, "Resumes", r.Resumes, func(rs Resume) string { return code(rs.Session) + " resumed " + code(rs.FromSession) }, func(rs Resume) {
		e.item("resumed", e.ref(rs.Ref))
		if rs.Agent != "" {
			e.item("agent", rs.Agent)
		}
		e.item("work", code(rs.Work))
		e.item("checkpoint inherited", codeOr(rs.CheckpointID, "none"))
		if rs.ExternalSession != "" {
			e.item("for conversation", code(rs.ExternalSession))
		}
		e.item("claim", rs.ClaimLine(code))
		if rs.PredecessorEnded != "" {
			e.item("predecessor ended", rs.PredecessorEnded)
		}
		e.knowledge("carried", rs.Carried)
	})
}

func walkExecutions(r *Report, e emitter) {
	entries(e, "Executions", r.Executions, func(x Execution) string { return "Execution " + code(x.ID) }, func(x Execution) {
		e.item("started", e.ref(x.Started))
		e.item("key", code(x.Key)+suffix(", purpose: ", x.Purpose))
		e.item("command", code(Argv(x.Argv))+suffix(" in ", codeOr(x.Cwd, "")))
		e.item("session", code(x.Session)+", work "+code(x.Work)+x.ClaimLine(code))
		if x.Retries != "" {
			e.item("retries", code(x.Retries))
		}
		e.repo("repository before", x.Repo)
		if f := x.Finished; f != nil {
			e.item("finished", f.Line()+" at "+e.ref(f.Ref))
			e.item("stdout", fmt.Sprintf("%d bytes, %s", f.StdoutBytes, code(f.StdoutSHA256)))
			e.item("stderr", fmt.Sprintf("%d bytes, %s", f.StderrBytes, code(f.StderrSHA256)))
			e.repo("repository after", f.RepoAfter)
		} else {
			e.item("finished", "no finish recorded at this revision")
		}
	})
}

// code marks s as a code span: each emitter turns the marks into its
// markup (Markdown's finish, HTML's esc).
func code(s string) string { return codeOpen + s + codeClose }

func codes(ss []string) string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = code(s)
	}
	return strings.Join(out, ", ")
}

func codeOr(s, none string) string {
	if s == "" {
		return none
	}
	return code(s)
}
