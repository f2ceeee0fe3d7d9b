package audit

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Markdown renders the report as a Markdown document.
func Markdown(r *Report) []byte {
	r = valid(r)
	m := &md{}
	m.printf("# Audit of %s %s\n\n", r.Subject.Kind, code(r.Subject.ID))
	m.printf("%s\n\n", r.Intro())
	m.printf("- project: %s\n", r.ProjectLine())
	m.printf("- made at: project_revision %d, head hash %s%s\n", r.ProjectRevision, code(orNone(r.HeadHash)), suffix(", ", r.HeadAt))
	m.printf("- chain: %s\n", r.Chain.Verdict())
	for _, w := range r.Work {
		m.printf("- work item %s: %s\n", code(w.Key), w.Line())
	}
	m.printf("- sessions: %d; claim events: %d; checkpoints: %d; resumes: %d; restatement checks: %d\n",
		len(r.Sessions), len(r.Claims), len(r.Checkpoints), len(r.Resumes), len(r.Restatements))
	m.printf("\nEach entry names its event as `seq N · hash`; `awr log --since N-1 --until N --json` shows it whole.\n")

	m.section("Sessions", len(r.Sessions))
	for _, s := range r.Sessions {
		m.printf("\n### Session %s\n\n", code(s.ID))
		m.item("started", refText(s.Started))
		m.item("agent", s.AgentLine())
		m.item("work", code(s.Work))
		if s.Workdir != "" {
			m.item("workdir", code(s.Workdir))
		}
		if s.ResumedFrom != "" {
			m.item("resumed from", code(s.ResumedFrom))
		}
		if len(s.ResumedBy) > 0 {
			m.item("resumed by", codes(s.ResumedBy))
		}
		m.repo("repository at start", s.Repo)
		if s.Ended != nil {
			m.item("ended", s.Ended.Outcome+suffix(" (", s.Ended.Reason, ")")+" at "+refText(s.Ended.Ref))
		} else {
			m.item("ended", "not ended at this revision")
		}
	}

	m.section("Claims", len(r.Claims))
	if len(r.Claims) > 0 {
		m.printf("\n")
	}
	for _, c := range r.Claims {
		m.printf("- %s: **%s** claim %s on %s, session %s%s\n", refText(c.Ref), c.Event, code(c.ClaimID), code(c.Work), code(c.Session), c.Details(code))
	}

	m.section("Checkpoints", len(r.Checkpoints))
	for _, c := range r.Checkpoints {
		m.printf("\n### Checkpoint %s\n\n", code(c.ID))
		m.item("recorded", refText(c.Ref))
		m.item("session", code(c.Session)+", agent "+c.Agent+", work "+code(c.Work))
		m.item("digest", c.Digest)
		m.item("next action", c.NextAction)
		m.item("context", c.ContextLine(code))
		if len(c.OpenLoopTexts) > 0 {
			m.list("open loops as written", c.OpenLoopTexts)
		}
		var changes []string
		for _, ch := range c.Changes {
			changes = append(changes, ch.Line(code))
		}
		m.list("changes", changes)
		m.knowledge("kept in force", c.Kept)
		m.repo("repository", c.Repo)
	}

	m.section("Resumes", len(r.Resumes))
	for _, rs := range r.Resumes {
		m.printf("\n### %s resumed %s\n\n", code(rs.Session), code(rs.FromSession))
		m.item("resumed", refText(rs.Ref))
		if rs.Agent != "" {
			m.item("agent", rs.Agent)
		}
		m.item("work", code(rs.Work))
		m.item("checkpoint inherited", codeOr(rs.CheckpointID, "none"))
		if rs.ExternalSession != "" {
			m.item("for conversation", code(rs.ExternalSession))
		}
		m.item("claim", rs.ClaimLine(code))
		if rs.PredecessorEnded != "" {
			m.item("predecessor ended", rs.PredecessorEnded)
		}
		m.knowledge("carried", rs.Carried)
	}

	m.section("Restatement checks", len(r.Restatements))
	for _, rs := range r.Restatements {
		m.printf("\n### Restatement of %s: %s\n\n", code(rs.Session), rs.Verdict)
		m.item("checked", refText(rs.Ref))
		m.item("against checkpoint", codeOr(rs.CheckpointID, "none"))
		var fields []string
		for _, it := range rs.Items {
			fields = append(fields, it.Line())
		}
		m.list("fields", fields)
	}

	m.section("Host bindings", len(r.Bindings))
	if len(r.Bindings) > 0 {
		m.printf("\n")
	}
	for _, b := range r.Bindings {
		m.printf("- %s: %s conversation %s bound to session %s on %s%s%s\n", refText(b.Ref), b.Client, code(b.ExternalSession), code(b.Session), code(b.Work),
			suffix(", at checkpoint ", codeOr(b.CheckpointID, "")), suffix(", continues ", codeOr(b.ContinuesFrom, "")))
	}

	m.section("Host events", len(r.HostEvents))
	if len(r.HostEvents) > 0 {
		m.printf("\n")
	}
	for _, h := range r.HostEvents {
		m.printf("- %s: %s %s (%s) for %s, session %s%s\n", refText(h.Ref), h.Client, h.Event, h.HostEvent, code(h.ExternalSession), code(h.Session), h.Details(code))
	}

	m.section("Executions", len(r.Executions))
	for _, x := range r.Executions {
		m.printf("\n### Execution %s\n\n", code(x.ID))
		m.item("started", refText(x.Started))
		m.item("key", code(x.Key)+suffix(", purpose: ", x.Purpose))
		m.item("command", code(Argv(x.Argv))+suffix(" in ", codeOr(x.Cwd, "")))
		m.item("session", code(x.Session)+", work "+code(x.Work)+x.ClaimLine(code))
		if x.Retries != "" {
			m.item("retries", code(x.Retries))
		}
		m.repo("repository before", x.Repo)
		if f := x.Finished; f != nil {
			m.item("finished", f.Line()+" at "+refText(f.Ref))
			m.item("stdout", fmt.Sprintf("%d bytes, %s", f.StdoutBytes, code(f.StdoutSHA256)))
			m.item("stderr", fmt.Sprintf("%d bytes, %s", f.StderrBytes, code(f.StderrSHA256)))
			m.repo("repository after", f.RepoAfter)
		} else {
			m.item("finished", "no finish recorded at this revision")
		}
	}

	m.section("Evidence", len(r.Evidence))
	if len(r.Evidence) > 0 {
		m.printf("\n")
	}
	for _, e := range r.Evidence {
		m.printf("- %s: evidence %s on %s, criterion %q: %s, %s, %s%s%s\n", refText(e.Ref), code(e.ID), code(e.Work), oneLine(e.Criterion), e.Basis, e.Level,
			passed(e.Passed), suffix(": ", oneLine(e.Detail)), e.RepoLine(code))
	}

	m.section("Work verified", len(r.Verifications))
	for _, v := range r.Verifications {
		m.printf("\n- %s: %s verified by session %s at level %s%s\n", refText(v.Ref), code(v.Work), code(v.Session), v.Level, repoShort(v.Repo, code))
		for _, c := range v.Criteria {
			m.printf("  - %q: evidence %s (%s)\n", oneLine(c.Criterion), code(c.EvidenceID), c.Level)
		}
	}
	return []byte(inert(finish(m.b.String())))
}

// finish turns the marked code spans of a document into Markdown code
// spans and escapes every "<" outside them, so no value becomes raw HTML
// in a Markdown viewer.
func finish(doc string) string {
	var b strings.Builder
	for {
		i := strings.Index(doc, codeOpen)
		if i < 0 {
			b.WriteString(strings.ReplaceAll(doc, "<", `\<`))
			return b.String()
		}
		b.WriteString(strings.ReplaceAll(doc[:i], "<", `\<`))
		doc = doc[i+len(codeOpen):]
		j := strings.Index(doc, codeClose)
		b.WriteString(codeSpan(doc[:j]))
		doc = doc[j+len(codeClose):]
	}
}

// inert escapes what a terminal would act on in a whole rendering (`awr
// audit` prints it byte for byte): control characters but the newline and
// the tab, the Unicode line and paragraph separators and the
// bidirectional controls become text (\x1b, \u202e), as every other text
// view of awr shows them. The renderings' own layout holds none of them.
func inert(doc string) string {
	if !strings.ContainsFunc(doc, actsOnTerminal) {
		return doc
	}
	var b strings.Builder
	for _, r := range doc {
		switch {
		case !actsOnTerminal(r):
			b.WriteRune(r)
		case r < 0x80:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	return b.String()
}

// actsOnTerminal reports the characters inert escapes.
func actsOnTerminal(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	}
	return unicode.Is(unicode.Cc, r) || r == '\u2028' || r == '\u2029' ||
		(r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') || r == '\u200e' || r == '\u200f'
}

// md accumulates a Markdown document.
type md struct{ b strings.Builder }

func (m *md) printf(format string, args ...any) { fmt.Fprintf(&m.b, format, args...) }

func (m *md) section(title string, n int) {
	m.printf("\n## %s\n", title)
	if n == 0 {
		m.printf("\nNone at this revision.\n")
	}
}

// item writes one "- label: value" line; a value of several lines goes on
// indented so it stays in the item.
func (m *md) item(label, value string) {
	m.printf("- %s: %s\n", label, indent(value, "  "))
}

func (m *md) list(label string, values []string) {
	if len(values) == 0 {
		m.item(label, "none")
		return
	}
	m.printf("- %s:\n", label)
	for _, v := range values {
		m.printf("  - %s\n", indent(v, "    "))
	}
}

func (m *md) knowledge(label string, k Knowledge) {
	if k.Empty() {
		m.item(label, "nothing")
		return
	}
	m.printf("- %s:\n", label)
	for _, g := range k.Groups() {
		m.printf("  - %s:\n", g.Name)
		for _, it := range g.Items {
			m.printf("    - %s: %s\n", code(it.ID), indent(it.Text, "      "))
		}
	}
}

func (m *md) repo(label string, r *Repo) {
	if r == nil {
		m.item(label, "not recorded")
		return
	}
	m.item(label, r.Line(code))
	if len(r.DirtyFiles) > 0 {
		m.printf("  - dirty files%s:\n", map[bool]string{true: " (truncated)"}[r.DirtyTruncated])
		for _, f := range r.DirtyFiles {
			m.printf("    - %s\n", f.Line(code))
		}
	}
	if len(r.FilesChanged) > 0 || r.FilesSince != "" {
		m.printf("  - files changed since %s%s:%s\n", sinceText(r.FilesSince, code), map[bool]string{true: " (truncated)"}[r.FilesTruncated],
			map[bool]string{true: " none"}[len(r.FilesChanged) == 0])
		for _, f := range r.FilesChanged {
			m.printf("    - %s\n", f.Line(code))
		}
	}
}

// code marks s as a code span (see finish).
func code(s string) string { return codeOpen + s + codeClose }

// codeSpan renders s as a Markdown code span.
func codeSpan(s string) string {
	if s == "" {
		return "``"
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

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

func refText(r Ref) string {
	return fmt.Sprintf("seq %d · %s · %s%s", r.Seq, code(r.Hash), r.At, suffix(" by ", r.Actor))
}

func indent(s, pad string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.ReplaceAll(s, "\n", "\n"+pad)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// suffix returns prefix+s+rest, or "" when s is empty.
func suffix(prefix, s string, rest ...string) string {
	if s == "" {
		return ""
	}
	return prefix + s + strings.Join(rest, "")
}

func passed(ok bool) string {
	if ok {
		return "passed"
	}
	return "failed"
}

func sinceText(since string, code func(string) string) string {
	switch since {
	case "session_start":
		return "the session started"
	case "":
		return "the previous checkpoint"
	}
	return "checkpoint " + code(since)
}

// The words both renderings share.

// Intro is the report's opening sentence.
func (r *Report) Intro() string {
	if r.Subject.Kind == SubjectSession {
		return fmt.Sprintf("Chain-of-custody report of session %s and the chain of sessions it resumed from and that resumed it, as of project_revision %d.", r.Subject.ID, r.ProjectRevision)
	}
	return fmt.Sprintf("Chain-of-custody report of work item %s: every session that touched it, as of project_revision %d.", r.Subject.ID, r.ProjectRevision)
}

// ProjectLine names the project.
func (r *Report) ProjectLine() string {
	if r.ProjectName == "" {
		return r.ProjectID
	}
	return r.ProjectName + " (" + r.ProjectID + ")"
}

// Verdict states the chain's verification status.
func (c Chain) Verdict() string {
	if c.Through == 0 {
		return "empty log, nothing to verify"
	}
	if c.Verified {
		return fmt.Sprintf("verified through seq %d: seq 1..%d contiguous, every hash recomputes, the log's rules hold", c.Through, c.Through)
	}
	return fmt.Sprintf("NOT VERIFIED: seq %d: %s", c.FirstBadSeq, c.Problem)
}

// Line describes a work item as its source declared it.
func (w WorkItem) Line() string {
	if w.Title == "" {
		return "no source declares it at this revision"
	}
	return fmt.Sprintf("%s (status %s, from %s)", oneLine(w.Title), w.Status, w.Source)
}

// AgentLine names a session's agent, provider and model.
func (s Session) AgentLine() string {
	out := s.Agent
	if s.Provider != "" || s.Model != "" {
		out += " (" + strings.TrimSpace(s.Provider+" "+s.Model) + ")"
	}
	return out
}

// Details lists a claim event's fencing token, lease, reason and move.
func (c ClaimEvent) Details(code func(string) string) string {
	var parts []string
	if c.Agent != "" {
		parts = append(parts, "agent "+c.Agent)
	}
	if c.FencingToken > 0 {
		parts = append(parts, fmt.Sprintf("fencing token %d", c.FencingToken))
	}
	if l := c.Lease(); l != "" {
		parts = append(parts, "lease "+l)
	}
	if c.MovedFrom != "" {
		parts = append(parts, "moved from session "+code(c.MovedFrom))
	}
	if c.Reason != "" {
		parts = append(parts, "reason "+c.Reason)
	}
	if c.ToSession != "" {
		parts = append(parts, "to session "+code(c.ToSession))
	}
	if c.Note != "" {
		parts = append(parts, "note: "+oneLine(c.Note))
	}
	if len(parts) == 0 {
		return ""
	}
	return ", " + strings.Join(parts, ", ")
}

// ContextLine says which context a checkpoint stood on.
func (c Checkpoint) ContextLine(code func(string) string) string {
	if c.ContextHash == "" {
		return "no context hash given" + suffix(" (", c.ContextHashNote, ")")
	}
	if c.ContextHashVerified {
		return code(c.ContextHash) + ", verified"
	}
	return code(c.ContextHash) + ", not verified" + suffix(" (", c.ContextHashNote, ")")
}

// Line describes one knowledge change.
func (c Change) Line(code func(string) string) string {
	var verb string
	switch c.Op {
	case "open":
		verb = "opened " + c.Kind
	case "resolve":
		verb = "resolved"
	case "drop":
		verb = "dropped"
	case "confirm":
		verb = "confirmed"
	case "retract":
		verb = "retracted"
	case "supersede":
		verb = "superseded"
	default:
		verb = c.Op
	}
	out := verb + " " + code(c.ID)
	if c.Text != "" {
		out += ": " + c.Text
	}
	if c.Note != "" {
		out += " (" + c.Note + ")"
	}
	if c.Supersedes != "" {
		out += ", replacing " + code(c.Supersedes)
	}
	if c.By != "" {
		out += ", by " + code(c.By)
	}
	return out
}

// Group is one kind of knowledge items, named for display.
type Group struct {
	Name  string
	Items []Item
}

// Groups lists the non-empty kinds of k in a fixed order.
func (k Knowledge) Groups() []Group {
	var out []Group
	for _, g := range []Group{{"open loops", k.OpenLoops}, {"decisions", k.Decisions}, {"facts", k.Facts}, {"hypotheses", k.Hypotheses}} {
		if len(g.Items) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// Line describes a repository state.
func (r *Repo) Line(code func(string) string) string {
	if r.Head == "" && r.Unverifiable != "" {
		return "unverifiable: " + r.Unverifiable
	}
	var parts []string
	if r.Branch != "" {
		parts = append(parts, "branch "+code(r.Branch))
	}
	head := "none"
	if r.Head != "" {
		head = code(r.Head)
	}
	parts = append(parts, "commit "+head)
	switch {
	case r.Dirty && r.DirtyFingerprint != "":
		parts = append(parts, "dirty "+code(r.DirtyFingerprint))
	case r.Dirty:
		parts = append(parts, "dirty")
	default:
		parts = append(parts, "clean")
	}
	if r.Unverifiable != "" {
		parts = append(parts, "unverifiable: "+r.Unverifiable)
	}
	return strings.Join(parts, ", ")
}

func repoShort(r *Repo, code func(string) string) string {
	if r == nil {
		return ""
	}
	return ", repository " + r.Line(code)
}

// Line describes a file and its status.
func (f File) Line(code func(string) string) string {
	out := f.Status + " " + code(f.Path)
	if f.From != "" {
		out += " (from " + code(f.From) + ")"
	}
	return out
}

// ClaimLine says what a resume did with the claim.
func (r Resume) ClaimLine(code func(string) string) string {
	if m := r.ClaimMoved; m != nil {
		return fmt.Sprintf("moved: %s released at seq %d, %s acquired at seq %d with fencing token %d", code(m.FromClaim), m.ReleasedSeq, code(m.ToClaim), m.AcquiredSeq, m.FencingToken)
	}
	return "not moved"
}

// Line describes one restatement field.
func (f RestatementField) Line() string {
	out := f.Field + ": " + f.Status
	if f.Expected != "" {
		out += fmt.Sprintf(", recorded %q", oneLine(f.Expected))
	}
	if f.Stated != "" {
		out += fmt.Sprintf(", stated %q", oneLine(f.Stated))
	}
	return out
}

// Details lists a host event's detail and what awr answered.
func (h HostEvent) Details(code func(string) string) string {
	out := suffix(", ", h.Detail)
	if h.Answer != "" {
		out += ", answered " + h.Answer
	}
	if h.ContextHash != "" {
		out += " " + code(h.ContextHash)
	}
	return out
}

// ClaimLine names the claim an execution ran under.
func (x Execution) ClaimLine(code func(string) string) string {
	if x.ClaimID == "" {
		return ", no claim"
	}
	return fmt.Sprintf(", claim %s (fencing token %d)", code(x.ClaimID), x.FencingToken)
}

// Line describes how an execution ended.
func (f ExecFinished) Line() string {
	out := fmt.Sprintf("exit %d after %s", f.ExitCode, time.Duration(f.DurationMs)*time.Millisecond)
	if f.Signal != "" {
		out += ", signal " + f.Signal
	}
	if f.Error != "" {
		out += ", error: " + oneLine(f.Error)
	}
	return out
}

// RepoLine names the repository evidence was recorded at.
func (e Evidence) RepoLine(code func(string) string) string {
	if e.Repo == nil {
		return ""
	}
	return " at " + e.Repo.Line(code)
}

// Argv writes a command line as a shell would read it back: each argument
// that needs it in single quotes.
func Argv(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
