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

func hbold(s string) string { return boldOpen + s + boldClose }

// marks turns the marks of an escaped line into tags.
var marks = strings.NewReplacer(codeOpen, "<code>", codeClose, "</code>", boldOpen, "<strong>", boldClose, "</strong>",
	refOpen, `<span class="ref">`, refClose, "</span>")

// esc escapes a line built with marks into HTML.
func esc(s string) string { return marks.Replace(html.EscapeString(s)) }

// HTML renders the report as one self-contained HTML page: inline CSS,
// no script, nothing loaded from anywhere, every value escaped.
func HTML(r *Report) []byte {
	h := &page{}
	walk(valid(r), h)
	h.printf("</body>\n</html>\n")
	return []byte(inert(h.b.String()))
}

// page accumulates an HTML page.
type page struct{ b strings.Builder }

func (h *page) printf(format string, args ...any) { fmt.Fprintf(&h.b, format, args...) }

func (h *page) start(title, plainTitle, intro string) {
	h.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	h.printf("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n")
	h.printf("<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", esc(plainTitle), style)
	h.printf("<h1>%s</h1>\n", esc(title))
	h.printf("<p>%s</p>\n<ul>\n", esc(intro))
}

func (h *page) summary(label, value string) { h.li(label, value) }

func (h *page) verdict(ok bool, text string) {
	class := "ok"
	if !ok {
		class = "bad"
	}
	h.printf("<li>chain: <span class=\"%s\">%s</span></li>\n", class, esc(text))
}

func (h *page) endSummary() {
	h.printf("</ul>\n<p>%s</p>\n", esc("Each entry names its event as seq N · hash; "+code("awr log --since N-1 --until N --json")+" shows it whole."))
}

func (h *page) line(s string) { h.printf("<li>%s</li>\n", esc(s)) }

func (h *page) nested(head string, subs []string) {
	h.printf("<li>%s\n<ul>\n", esc(head))
	for _, s := range subs {
		h.printf("<li>%s</li>\n", esc(s))
	}
	h.printf("</ul></li>\n")
}

func (h *page) item(label, value string) { h.li(label, value) }

func (h *page) ref(r Ref) string { return hrefText(r) }

func (h *page) bold(s string) string { return hbold(s) }

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
func (h *page) begin(n int, _ bool) {
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
			h.printf("<li class=\"text\">%s</li>\n", esc(code(it.ID)+": "+it.Text))
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
		h.li(label, r.Line(code))
		return
	}
	h.printf("<li>%s: %s\n<ul>\n", esc(label), esc(r.Line(code)))
	if len(r.DirtyFiles) > 0 {
		h.printf("<li>%s:\n<ul>\n", esc("dirty files"+map[bool]string{true: " (truncated)"}[r.DirtyTruncated]))
		for _, f := range r.DirtyFiles {
			h.printf("<li>%s</li>\n", esc(f.Line(code)))
		}
		h.printf("</ul></li>\n")
	}
	if len(r.FilesChanged) > 0 || r.FilesSince != "" {
		h.printf("<li>%s", esc("files changed since "+sinceText(r.FilesSince, code)+map[bool]string{true: " (truncated)"}[r.FilesTruncated]+":"+map[bool]string{true: " none"}[len(r.FilesChanged) == 0]))
		if len(r.FilesChanged) > 0 {
			h.printf("\n<ul>\n")
			for _, f := range r.FilesChanged {
				h.printf("<li>%s</li>\n", esc(f.Line(code)))
			}
			h.printf("</ul>")
		}
		h.printf("</li>\n")
	}
	h.printf("</ul></li>\n")
}

func hrefText(r Ref) string {
	return refOpen + fmt.Sprintf("seq %d · %s · %s%s", r.Seq, code(r.Hash), r.At, suffix(" by ", r.Actor)) + refClose
}
