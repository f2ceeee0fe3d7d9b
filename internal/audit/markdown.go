package audit

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Markdown renders the report as a Markdown document.
func Markdown(r *Report) []byte {
	m := &md{}
	walk(valid(r), m)
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

func (m *md) start(title, _, intro string) { m.printf("# %s\n\n%s\n\n", title, intro) }

func (m *md) summary(label, value string) { m.printf("- %s: %s\n", label, value) }

func (m *md) verdict(_ bool, text string) { m.summary("chain", text) }

func (m *md) endSummary() {
	m.printf("\nEach entry names its event as %s; %s shows it whole.\n", code("seq N · hash"), code("awr log --since N-1 --until N --json"))
}

func (m *md) open(title string) { m.printf("\n### %s\n\n", title) }

func (m *md) close() {}

func (m *md) begin(n int, loose bool) {
	if n > 0 && !loose {
		m.printf("\n")
	}
}

func (m *md) end(int) {}

func (m *md) line(s string) { m.printf("- %s\n", s) }

// nested is a loose entry: a blank line before it, its subs under it.
func (m *md) nested(head string, subs []string) {
	m.printf("\n- %s\n", head)
	for _, s := range subs {
		m.printf("  - %s\n", s)
	}
}

func (m *md) text(label, value string) { m.item(label, value) }

func (m *md) ref(r Ref) string { return refText(r) }

func (m *md) bold(s string) string { return "**" + s + "**" }

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
		return fmt.Sprintf("chain intact through seq %d (seq 1..%d contiguous, every hash recomputes, the log's rules hold), not anchored: a rewritten and re-hashed history would also pass; run `awr anchor`, then `awr verify --anchors`", c.Through, c.Through)
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
	out := verb + " " + code(c.ID) + suffix(": ", c.Text) + suffix(" (", c.Note, ")")
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
	out := suffix(", ", h.Detail) + suffix(", answered ", h.Answer)
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
	out += suffix(", signal ", f.Signal)
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
