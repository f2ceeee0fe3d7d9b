package source

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/awr-dev/awr/events"
)

// regDoc collects the items of a structured register (JSON, JSON Lines,
// CSV): what it read, the issues, and the per-format status words.
type regDoc struct {
	path     string
	hash     string
	content  []byte
	opts     Options
	synonyms map[string]string // the format's own status words, lowercased
	res      Result
}

func newRegDoc(path string, content []byte, opts Options, synonyms map[string]string) *regDoc {
	return &regDoc{path: path, hash: Hash(content), content: content, opts: opts, synonyms: synonyms}
}

func (d *regDoc) issue(code string, line int, key, format string, args ...any) {
	d.res.Issues = append(d.res.Issues, events.SourceIssue{Code: code, Path: d.path, Line: line, Key: key, Message: fmt.Sprintf(format, args...)})
}

// lineAt is the 1-based line of byte offset off.
func (d *regDoc) lineAt(off int64) int {
	if off < 0 {
		off = 0
	}
	if off > int64(len(d.content)) {
		off = int64(len(d.content))
	}
	return 1 + bytes.Count(d.content[:off], []byte("\n"))
}

// text refuses content that is not UTF-8 text: a NUL byte or an invalid
// sequence, named by line. Nothing of such a file is indexed.
func (d *regDoc) text() bool {
	if i := bytes.IndexByte(d.content, 0); i >= 0 {
		d.issue(IssueUnreadable, d.lineAt(int64(i)), "", "file holds a NUL byte: it looks binary or UTF-16, not UTF-8 text; nothing of it is indexed")
		return false
	}
	if !utf8.Valid(d.content) {
		off := 0
		for off < len(d.content) {
			r, n := utf8.DecodeRune(d.content[off:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			off += n
		}
		d.issue(IssueMalformed, d.lineAt(int64(off)), "", "invalid UTF-8; nothing of the file is indexed")
		return false
	}
	return true
}

// status maps a raw status word: the manifest's status_map, canonical
// names, the format's own words, then the built-in synonyms. A word none
// of them knows gives Unknown and an issue.
func (d *regDoc) status(raw string, line int, key string) (status, rawStatus string) {
	w := strings.TrimSpace(raw)
	if w == "" {
		d.issue(IssueStatusUnmapped, line, key, "item %s has no status; it is unknown", key)
		return Unknown, ""
	}
	s, ok := NormalizeStatus(w, Options{StatusMap: d.opts.StatusMap})
	if !ok && !mapped(d.opts.StatusMap, w) {
		if f, known := d.synonyms[strings.ToLower(w)]; known {
			s, ok = f, true
		}
	}
	if !ok {
		d.issue(IssueStatusUnmapped, line, key, "status %q of %s is not a known status; map it in status_map", w, key)
		return Unknown, w
	}
	if s != w {
		return s, w
	}
	return s, ""
}

// mapped reports whether the manifest's status_map names w.
func mapped(m map[string]string, w string) bool {
	for k := range m {
		if strings.EqualFold(strings.TrimSpace(k), strings.TrimSpace(w)) {
			return true
		}
	}
	return false
}

// ref locates an element by path and lines, without the file's content
// hash: an item an edit of its file leaves as it was stays identical, so
// a reindex changes exactly the items edited (the source's own row
// carries the hash).
func (d *regDoc) ref(start, end int) events.SourceRef {
	if end < start {
		end = start
	}
	return events.SourceRef{Path: d.path, LineStart: start, LineEnd: end}
}

// unstamped drops the content hash from the source references of res's
// items (see regDoc.ref).
func unstamped(res Result) Result {
	for i := range res.Items {
		res.Items[i].Source.ContentHash = ""
	}
	return res
}

// addDep adds a required dependency on key, once.
func addDep(it *events.WorkItem, key string) {
	if key == "" || key == it.Key {
		return
	}
	for _, d := range it.DependsOn {
		if d.Key == key {
			return
		}
	}
	it.DependsOn = append(it.DependsOn, events.Dependency{Key: key, Required: true})
}

// done checks the register as a whole: a key declared twice, a parent
// naming no item of the register, a key that does not match the
// source's key_pattern, each an issue at the line of the item.
func (d *regDoc) done() Result {
	checkGraph(&d.res, d.path, d.opts)
	return d.res
}

// checkGraph adds the issues of a register's items taken together.
func checkGraph(res *Result, path string, opts Options) {
	add := func(code string, line int, key, format string, args ...any) {
		res.Issues = append(res.Issues, events.SourceIssue{Code: code, Path: path, Line: line, Key: key, Message: fmt.Sprintf(format, args...)})
	}
	first := map[string]int{}
	for _, it := range res.Items {
		if l, ok := first[it.Key]; ok {
			add(IssueDuplicateKey, it.Source.LineStart, it.Key, "item key %s at line %d repeats line %d; the first is used", it.Key, it.Source.LineStart, l)
			continue
		}
		first[it.Key] = it.Source.LineStart
	}
	// A dependency on a key no source declares, and a cycle, are the
	// organization's gaps (dependency_missing, dependency_cycle): a
	// dependency may name another source's item.
	for _, it := range res.Items {
		if it.Parent != "" {
			if _, ok := first[it.Parent]; !ok {
				add(IssueUnknownReference, it.Source.LineStart, it.Key, "%s is a part of %s, which the register does not hold", it.Key, it.Parent)
			}
		}
	}
	sort.SliceStable(res.Issues, func(i, j int) bool { return res.Issues[i].Line < res.Issues[j].Line })
}

// csvTable is a CSV export read whole: the header (names lowercased and
// trimmed; a name repeated, as Jira repeats Labels, keeps every column)
// and the rows with their line numbers. A row whose field count differs
// from the header's is reported at its line and skipped, never half-read;
// a quote never closed ends the file there.
type csvTable struct {
	header []string
	rows   [][]string
	lines  []int
}

// csvExport reads the document as a CSV export of tool whose header must
// name the three columns given (matched case-insensitively); false after
// the issue that says why not (not text, malformed CSV, a column
// missing).
func (d *regDoc) csvExport(tool, key, title, status string) (*csvTable, bool) {
	if !d.text() {
		return nil, false
	}
	t, ok := d.readCSV()
	if !ok {
		return nil, false
	}
	if !t.has(strings.ToLower(key), strings.ToLower(title), strings.ToLower(status)) {
		d.issue(IssueMalformed, 1, "", "a %s CSV export has %s, %s and %s columns; this header lacks one", tool, key, title, status)
		return nil, false
	}
	return t, true
}

func (d *regDoc) readCSV() (*csvTable, bool) {
	r := csv.NewReader(bytes.NewReader(d.content))
	r.FieldsPerRecord = -1
	r.LazyQuotes = false
	t := &csvTable{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			line := 0
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line = pe.StartLine
			}
			d.issue(IssueMalformed, line, "", "CSV record at line %d: %v; the rest of the file is not indexed", line, err)
			break
		}
		line, _ := r.FieldPos(0)
		if t.header == nil {
			for _, h := range rec {
				t.header = append(t.header, strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))))
			}
			continue
		}
		if len(rec) != len(t.header) {
			d.issue(IssueMalformed, line, "", "row at line %d has %d fields, the header %d; it is skipped", line, len(rec), len(t.header))
			continue
		}
		t.rows = append(t.rows, rec)
		t.lines = append(t.lines, line)
	}
	if t.header == nil {
		d.issue(IssueMalformed, 1, "", "the CSV export has no header row")
		return nil, false
	}
	return t, true
}

// get returns the first non-empty value of the named columns in row i.
func (t *csvTable) get(i int, names ...string) string {
	for _, n := range names {
		for c, h := range t.header {
			if h == n && strings.TrimSpace(t.rows[i][c]) != "" {
				return strings.TrimSpace(t.rows[i][c])
			}
		}
	}
	return ""
}

// all returns every non-empty value of the named columns in row i.
func (t *csvTable) all(i int, names ...string) []string {
	var out []string
	for _, n := range names {
		for c, h := range t.header {
			if h == n && strings.TrimSpace(t.rows[i][c]) != "" {
				out = append(out, strings.TrimSpace(t.rows[i][c]))
			}
		}
	}
	return out
}

// has reports whether the header names every one of names.
func (t *csvTable) has(names ...string) bool {
	for _, n := range names {
		found := false
		for _, h := range t.header {
			found = found || h == n
		}
		if !found {
			return false
		}
	}
	return true
}
