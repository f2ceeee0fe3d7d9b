package audit

import (
	"fmt"
	"html"
	"strings"
)

// style is the page's only styling, inline: the page loads nothing.
const style = `body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem;margin-top:2rem}h3{font-size:1rem;margin-bottom:.3rem}
code{font:13px ui-monospace,monospace;background:#f3f4f6;padding:0 .2rem;border-radius:3px;word-break:break-all}
ul{padding-left:1.4rem}li{margin:.15rem 0}.ref{color:#57606a;font-size:13px}.none{color:#57606a;font-style:italic}
.ok{color:#1a7f37;font-weight:600}.bad{color:#cf222e;font-weight:600}.text{white-space:pre-wrap}`

// Code spans are marked with two bytes that never occur in UTF-8 (and
// every value decoded from the log is UTF-8) while a line is built from
// the shared wording; then the whole line is escaped and only the marks
// become <code> tags: every value is escaped, none is trusted.
// The same goes for a strong word and for the reference to an event
// (0xfa to 0xff never occur in UTF-8).
const (
	codeOpen  = "\xfe"
	codeClose = "\xff"
	boldOpen  = "\xfc"
	boldClose = "\xfd"
	refOpen   = "\xfa"
	refClose  = "\xfb"
)

func hcode(s string) string { return codeOpen + s + codeClose }

func hbold(s string) string { return boldOpen + s + boldClose }

// marks turns the marks of an escaped line into tags.
var marks = strings.NewReplacer(codeOpen, "<code>", codeClose, "</code>", boldOpen, "<strong>", boldClose, "</strong>",
	refOpen, `<span class="ref">`, refClose, "</span>")

// esc escapes a line built with marks into HTML.
func esc(s string) string { return marks.Replace(html.EscapeString(s)) }

// HTML renders the report as one self-contained HTML page: inline CSS,
// no script, nothing loaded from anywhere, every value escaped.
func HTML(r *Report) []byte {
	r = valid(r)
	h := &page{}
	title := fmt.Sprintf("Audit of %s %s", r.Subject.Kind, r.Subject.ID)
	h.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	h.printf("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n")
	h.printf("<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", esc(title), style)
	h.printf("<h1>%s</h1>\n", esc(fmt.Sprintf("Audit of %s %s", r.Subject.Kind, hcode(r.Subject.ID))))
	h.printf("<p>%s</p>\n<ul>\n", esc(r.Intro()))
	h.li("project", r.ProjectLine())
	h.li("made at", fmt.Sprintf("project_revision %d, head hash %s%s", r.ProjectRevision, hcode(orNone(r.HeadHash)), suffix(", ", r.HeadAt)))
	class := "ok"
	if !r.Chain.Verified {
		class = "bad"
	}
	h.printf("<li>chain: <span class=\"%s\">%s</span></li>\n", class, esc(r.Chain.Verdict()))
	for _, w := range r.Work {
		h.li("work item "+hcode(w.Key), w.Line())
	}
	h.li("sessions", fmt.Sprintf("%d; claim events: %d; checkpoints: %d; resumes: %d; restatement checks: %d",
		len(r.Sessions), len(r.Claims), len(r.Checkpoints), len(r.Resumes), len(r.Restatements)))
	h.printf("</ul>\n<p>%s</p>\n", esc("Each entry names its event as seq N · hash; "+hcode("awr log --since N-1 --until N --json")+" shows it whole."))

	h.section("Sessions", len(r.Sessions))
	for _, s := range r.Sessions {
		h.open("Session " + hcode(s.ID))
		h.li("started", hrefText(s.Started))
		h.li("agent", s.AgentLine())
		h.li("work", hcode(s.Work))
		if s.Workdir != "" {
			h.li("workdir", hcode(s.Workdir))
		}
		if s.ResumedFrom != "" {
			h.li("resumed from", hcode(s.ResumedFrom))
		}
		if len(s.ResumedBy) > 0 {
			var ids []string
			for _, id := range s.ResumedBy {
				ids = append(ids, hcode(id))
			}
			h.li("resumed by", strings.Join(ids, ", "))
		}
		h.repo("repository at start", s.Repo)
		if s.Ended != nil {
			h.li("ended", s.Ended.Outcome+suffix(" (", s.Ended.Reason, ")")+" at "+hrefText(s.Ended.Ref))
		} else {
			h.li("ended", "not ended at this revision")
		}
		h.close()
	}

	h.section("Claims", len(r.Claims))
	h.begin(len(r.Claims))
	for _, c := range r.Claims {
		h.printf("<li>%s</li>\n", esc(fmt.Sprintf("%s: %s claim %s on %s, session %s%s", hrefText(c.Ref), hbold(c.Event), hcode(c.ClaimID), hcode(c.Work), hcode(c.Session), c.Details(hcode))))
	}
	h.end(len(r.Claims))

	h.section("Checkpoints", len(r.Checkpoints))
	for _, c := range r.Checkpoints {
		h.open("Checkpoint " + hcode(c.ID))
		h.li("recorded", hrefText(c.Ref))
		h.li("session", hcode(c.Session)+", agent "+c.Agent+", work "+hcode(c.Work))
		h.text("digest", c.Digest)
		h.text("next action", c.NextAction)
		h.li("context", c.ContextLine(hcode))
		if len(c.OpenLoopTexts) > 0 {
			h.list("open loops as written", c.OpenLoopTexts)
		}
		var changes []string
		for _, ch := range c.Changes {
			changes = append(changes, ch.Line(hcode))
		}
		h.list("changes", changes)
		h.knowledge("kept in force", c.Kept)
		h.repo("repository", c.Repo)
		h.close()
	}

	h.section("Resumes", len(r.Resumes))
	for _, rs := range r.Resumes {
		h.open(hcode(rs.Session) + " resumed " + hcode(rs.FromSession))
		h.li("resumed", hrefText(rs.Ref))
		if rs.Agent != "" {
			h.li("agent", rs.Agent)
		}
		h.li("work", hcode(rs.Work))
		h.li("checkpoint inherited", hcodeOr(rs.CheckpointID, "none"))
		if rs.ExternalSession != "" {
			h.li("for conversation", hcode(rs.ExternalSession))
		}
		h.li("claim", rs.ClaimLine(hcode))
		if rs.PredecessorEnded != "" {
			h.li("predecessor ended", rs.PredecessorEnded)
		}
		h.knowledge("carried", rs.Carried)
		h.close()
	}

	h.section("Restatement checks", len(r.Restatements))
	for _, rs := range r.Restatements {
		h.open("Restatement of " + hcode(rs.Session) + ": " + rs.Verdict)
		h.li("checked", hrefText(rs.Ref))
		h.li("against checkpoint", hcodeOr(rs.CheckpointID, "none"))
		var fields []string
		for _, it := range rs.Items {
			fields = append(fields, it.Line())
		}
		h.list("fields", fields)
		h.close()
	}

	h.section("Host bindings", len(r.Bindings))
	h.begin(len(r.Bindings))
	for _, b := range r.Bindings {
		h.printf("<li>%s</li>\n", esc(fmt.Sprintf("%s: %s conversation %s bound to session %s on %s%s%s", hrefText(b.Ref), b.Client, hcode(b.ExternalSession), hcode(b.Session), hcode(b.Work),
			suffix(", at checkpoint ", hcodeOr(b.CheckpointID, "")), suffix(", continues ", hcodeOr(b.ContinuesFrom, "")))))
	}
	h.end(len(r.Bindings))

	h.section("Host events", len(r.HostEvents))
	h.begin(len(r.HostEvents))
	for _, e := range r.HostEvents {
		h.printf("<li>%s</li>\n", esc(fmt.Sprintf("%s: %s %s (%s) for %s, session %s%s", hrefText(e.Ref), e.Client, e.Event, e.HostEvent, hcode(e.ExternalSession), hcode(e.Session), e.Details(hcode))))
	}
	h.end(len(r.HostEvents))

	h.section("Executions", len(r.Executions))
	for _, x := range r.Executions {
		h.open("Execution " + hcode(x.ID))
		h.li("started", hrefText(x.Started))
		h.li("key", hcode(x.Key)+suffix(", purpose: ", x.Purpose))
		h.li("command", hcode(Argv(x.Argv))+suffix(" in ", hcodeOr(x.Cwd, "")))
		h.li("session", hcode(x.Session)+", work "+hcode(x.Work)+x.ClaimLine(hcode))
		if x.Retries != "" {
			h.li("retries", hcode(x.Retries))
		}
		h.repo("repository before", x.Repo)
		if f := x.Finished; f != nil {
			h.li("finished", f.Line()+" at "+hrefText(f.Ref))
			h.li("stdout", fmt.Sprintf("%d bytes, %s", f.StdoutBytes, hcode(f.StdoutSHA256)))
			h.li("stderr", fmt.Sprintf("%d bytes, %s", f.StderrBytes, hcode(f.StderrSHA256)))
			h.repo("repository after", f.RepoAfter)
		} else {
			h.li("finished", "no finish recorded at this revision")
		}
		h.close()
	}

	h.section("Evidence", len(r.Evidence))
	h.begin(len(r.Evidence))
	for _, e := range r.Evidence {
		h.printf("<li>%s</li>\n", esc(fmt.Sprintf("%s: evidence %s on %s, criterion %q: %s, %s, %s%s%s", hrefText(e.Ref), hcode(e.ID), hcode(e.Work), oneLine(e.Criterion), e.Basis, e.Level,
			passed(e.Passed), suffix(": ", oneLine(e.Detail)), e.RepoLine(hcode))))
	}
	h.end(len(r.Evidence))

	h.section("Work verified", len(r.Verifications))
	h.begin(len(r.Verifications))
	for _, v := range r.Verifications {
		h.printf("<li>%s\n<ul>\n", esc(fmt.Sprintf("%s: %s verified by session %s at level %s%s", hrefText(v.Ref), hcode(v.Work), hcode(v.Session), v.Level, repoShort(v.Repo, hcode))))
		for _, c := range v.Criteria {
			h.printf("<li>%s</li>\n", esc(fmt.Sprintf("%q: evidence %s (%s)", oneLine(c.Criterion), hcode(c.EvidenceID), c.Level)))
		}
		h.printf("</ul></li>\n")
	}
	h.end(len(r.Verifications))
	h.printf("</body>\n</html>\n")
	return []byte(inert(h.b.String()))
}

// page accumulates an HTML page.
type page struct{ b strings.Builder }

func (h *page) printf(format string, args ...any) { fmt.Fprintf(&h.b, format, args...) }

func (h *page) section(title string, n int) {
	h.printf("<h2>%s</h2>\n", esc(title))
	if n == 0 {
		h.printf("<p class=\"none\">None at this revision.</p>\n")
	}
}

// open starts an entry: its heading and its list of fields.
func (h *page) open(title string) { h.printf("<h3>%s</h3>\n<ul>\n", esc(title)) }

func (h *page) close() { h.printf("</ul>\n") }

// begin and end wrap a section's one-line entries in a list, if any.
func (h *page) begin(n int) {
	if n > 0 {
		h.printf("<ul>\n")
	}
}

func (h *page) end(n int) {
	if n > 0 {
		h.printf("</ul>\n")
	}
}

func (h *page) li(label, value string) { h.printf("<li>%s: %s</li>\n", esc(label), esc(value)) }

// text is a field holding an agent's own text, kept with its line breaks.
func (h *page) text(label, value string) {
	h.printf("<li>%s: <span class=\"text\">%s</span></li>\n", esc(label), esc(value))
}

func (h *page) list(label string, values []string) {
	if len(values) == 0 {
		h.li(label, "none")
		return
	}
	h.printf("<li>%s:\n<ul>\n", esc(label))
	for _, v := range values {
		h.printf("<li class=\"text\">%s</li>\n", esc(v))
	}
	h.printf("</ul></li>\n")
}

func (h *page) knowledge(label string, k Knowledge) {
	if k.Empty() {
		h.li(label, "nothing")
		return
	}
	h.printf("<li>%s:\n<ul>\n", esc(label))
	for _, g := range k.Groups() {
		h.printf("<li>%s:\n<ul>\n", esc(g.Name))
		for _, it := range g.Items {
			h.printf("<li class=\"text\">%s</li>\n", esc(hcode(it.ID)+": "+it.Text))
		}
		h.printf("</ul></li>\n")
	}
	h.printf("</ul></li>\n")
}

func (h *page) repo(label string, r *Repo) {
	if r == nil {
		h.li(label, "not recorded")
		return
	}
	if len(r.DirtyFiles) == 0 && len(r.FilesChanged) == 0 && r.FilesSince == "" {
		h.li(label, r.Line(hcode))
		return
	}
	h.printf("<li>%s: %s\n<ul>\n", esc(label), esc(r.Line(hcode)))
	if len(r.DirtyFiles) > 0 {
		h.printf("<li>%s:\n<ul>\n", esc("dirty files"+map[bool]string{true: " (truncated)"}[r.DirtyTruncated]))
		for _, f := range r.DirtyFiles {
			h.printf("<li>%s</li>\n", esc(f.Line(hcode)))
		}
		h.printf("</ul></li>\n")
	}
	if len(r.FilesChanged) > 0 || r.FilesSince != "" {
		h.printf("<li>%s", esc("files changed since "+sinceText(r.FilesSince, hcode)+map[bool]string{true: " (truncated)"}[r.FilesTruncated]+":"+map[bool]string{true: " none"}[len(r.FilesChanged) == 0]))
		if len(r.FilesChanged) > 0 {
			h.printf("\n<ul>\n")
			for _, f := range r.FilesChanged {
				h.printf("<li>%s</li>\n", esc(f.Line(hcode)))
			}
			h.printf("</ul>")
		}
		h.printf("</li>\n")
	}
	h.printf("</ul></li>\n")
}

func hcodeOr(s, none string) string {
	if s == "" {
		return none
	}
	return hcode(s)
}

func hrefText(r Ref) string {
	return refOpen + fmt.Sprintf("seq %d · %s · %s%s", r.Seq, hcode(r.Hash), r.At, suffix(" by ", r.Actor)) + refClose
}
