package main

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/awr-dev/awr/internal/lazyre"
)

// hinter makes the commands awr prints complete for the user who reads
// them: when the command line named the project with --project, every
// awr command in a hint, a next: line or a to accept: line gets the same
// --project, inserted after the subcommand's path (awr session list
// --project DIR ...). It is applied once, at the CLI's edge, to errors,
// text and JSON alike, so no call site has to know the flag.
type hinter struct {
	root    *cmdNode
	project string // as the user wrote it; "" when --project was not given
	// commands is set by the commands whose JSON holds commands to run
	// under the key "command" (intake inspect's actions, hygiene's
	// findings); elsewhere that key holds what a person recorded (an
	// evidence command, a seat's template), which is left as it was.
	commands bool
}

// projectArg returns the value of --project on the command line, "" when
// it is not there (AWR_PROJECT stays in the environment of the next
// command, so a hint needs nothing for it).
func projectArg(args []string) string {
	for i, a := range args {
		switch {
		case a == "--":
			return ""
		case a == "--project" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--project="):
			return strings.TrimPrefix(a, "--project=")
		}
	}
	return ""
}

// commandSpans returns the [start, end) byte ranges of the awr commands
// in text: each begins with "awr " followed by one of awr's commands or a
// flag, at the start of text or after a space, "(" or "`", and runs to
// the end of text or to the first ", ", "; ", " (", ")" or "`" after it. A
// hint is prose around at most a few such commands ("edit FILE, then awr
// source reindex").
func commandSpans(root *cmdNode, text string) [][2]int {
	var spans [][2]int
	for i := 0; i+4 <= len(text); {
		j := strings.Index(text[i:], "awr ")
		if j < 0 {
			break
		}
		start := i + j
		i = start + 4
		if start > 0 && !strings.ContainsRune(" (`", rune(text[start-1])) {
			continue
		}
		first, _, _ := strings.Cut(text[start+4:], " ")
		first = strings.TrimRight(first, ",;).`")
		if !strings.HasPrefix(first, "-") && root.sub(first) == nil {
			continue
		}
		end := len(text)
		for _, sep := range []string{", ", "; ", " (", ")", "`"} {
			if k := strings.Index(text[start+4:], sep); k >= 0 && start+4+k < end {
				end = start + 4 + k
			}
		}
		// A sentence's full stop is not part of the command; a word "."
		// (--project .) is.
		for end > start && text[end-1] == ' ' || end > start+1 && text[end-1] == '.' && text[end-2] != ' ' {
			end--
		}
		spans = append(spans, [2]int{start, end})
		i = end
	}
	return spans
}

// child returns n's subcommand called name, or nil.
func child(n *kong.Node, name string) *kong.Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Type != kong.CommandNode {
			continue
		}
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}

// command rewrites one awr command: --project after its subcommand path,
// unless it names a project already or asks for help.
func (h hinter) command(cmd string) string {
	words := strings.Fields(cmd)
	for _, w := range words {
		if w == "--project" || strings.HasPrefix(w, "--project=") || w == "--help" {
			return cmd
		}
	}
	// Find where the path ends: after "awr" and each word that is a
	// subcommand of the one before.
	n, at := h.root, len("awr")
	rest := cmd[at:]
	for {
		trimmed := strings.TrimLeft(rest, " ")
		word, _, _ := strings.Cut(trimmed, " ")
		c := n.sub(word)
		if word == "" || c == nil {
			break
		}
		n = c
		skip := len(rest) - len(trimmed) + len(word)
		at += skip
		rest = rest[skip:]
	}
	return cmd[:at] + " --project " + shellQuote(h.project) + cmd[at:]
}

// text rewrites every awr command in s.
func (h hinter) text(s string) string {
	if h.project == "" {
		return s
	}
	spans := commandSpans(h.root, s)
	for k := len(spans) - 1; k >= 0; k-- {
		sp := spans[k]
		s = s[:sp[0]] + h.command(s[sp[0]:sp[1]]) + s[sp[1]:]
	}
	return s
}

// hintLine finds the hints of awr's text output: what follows "next: ",
// "to accept: " or "run: ", and a parenthesised "(awr ...)".
var hintLine = lazyre.New(`(next: |to accept: |run: |\(awr )(.*)$`)

// lines rewrites the hints of a text answer, line by line.
func (h hinter) lines(s string) string {
	if h.project == "" {
		return s
	}
	ls := strings.SplitAfter(s, "\n")
	for i, l := range ls {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		if m := hintLine.FindStringSubmatchIndex(l); m != nil {
			from := m[4]
			if strings.HasPrefix(l[m[2]:m[3]], "(") {
				from = m[2] + 1
			}
			l = l[:from] + h.text(l[from:])
		} else if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "awr ") {
			// A line that is one command and nothing else (search's
			// show, hygiene's retiring command); prose that begins with
			// one is left alone.
			if sp := commandSpans(h.root, t); len(sp) == 1 && sp[0] == [2]int{0, len(t)} {
				l = l[:len(l)-len(t)] + h.text(t)
			}
		}
		if nl {
			l += "\n"
		}
		ls[i] = l
	}
	return strings.Join(ls, "")
}

// hintKeys are the JSON fields that hold a command to run next: besides
// the hints and next steps, search's show, doctor's repair and a restore
// check's remediation.
var hintKeys = map[string]bool{"hint": true, "next": true, "next_step": true, "next_action": true, "accept": true,
	"show": true, "repair": true, "remediation": true}

// json rewrites the hints of one JSON document (as encoded by the
// renderer: one value, then a newline). It walks the document's strings
// and splices in the rewritten value of each hint key (hintKeys, at any
// depth); every other byte is kept as it was. A document that is not
// valid JSON comes back as it was.
//
// It does not decode the document: a token-by-token walk that re-encoded
// every value was a third of status's Go allocations (1 MB on the
// 150-task project) for the few strings that change.
func (h hinter) json(doc []byte) []byte {
	if h.project == "" {
		return doc
	}
	var out []byte // nil until a hint changes
	kept := 0      // doc[:kept] is in out
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		// In valid JSON every quote met here opens a string: the walk
		// steps over whole strings, and a quote inside one is escaped.
		end := stringEnd(doc, i)
		if end < 0 {
			return doc
		}
		colon := skipSpace(doc, end+1)
		if key := string(doc[i+1 : end]); colon < len(doc) && doc[colon] == ':' && (hintKeys[key] || h.commands && key == "command") {
			if v := skipSpace(doc, colon+1); v < len(doc) && doc[v] == '"' {
				vend := stringEnd(doc, v)
				if vend < 0 {
					return doc
				}
				var cmd string
				if err := json.Unmarshal(doc[v:vend+1], &cmd); err != nil {
					return doc
				}
				if r := h.text(cmd); r != cmd {
					out = append(out, doc[kept:v]...)
					out = appendJSONString(out, r)
					kept = vend + 1
				}
				end = vend
			}
		}
		i = end
	}
	if out == nil {
		return doc
	}
	return append(out, doc[kept:]...)
}

// stringEnd returns the index of the quote that closes the JSON string
// opening at doc[i], or -1.
func stringEnd(doc []byte, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\n' || doc[i] == '\t' || doc[i] == '\r') {
		i++
	}
	return i
}

// appendJSONString appends s encoded as the renderer encodes strings (no
// HTML escaping).
func appendJSONString(out []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(out, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// shellQuote returns s as one shell word.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-:@+=,%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// usageHint is the help to name for a command line kong could not parse:
// that of the deepest command it recognised.
func usageHint(err error) string {
	pe, ok := err.(*kong.ParseError)
	if !ok || pe.Context == nil {
		return "awr --help"
	}
	var path []string
	for _, p := range pe.Context.Path {
		if p.Command != nil {
			path = append(path, p.Command.Name)
		}
	}
	return strings.TrimSpace("awr "+strings.Join(path, " ")) + " --help"
}
