package hosts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxContext is the most text awr puts in one answer's context, counted in
// UTF-8 bytes. Claude Code caps hook output strings at 10,000 characters and
// Codex spills hook text over about 10,000 bytes to a file; a byte is never
// less than either host's unit, so text within MaxContext reaches every
// host's model inline.
const MaxContext = 10000

// MaxReminder is the most bytes of a one-line reminder.
const MaxReminder = 200

// Answer is what awr wants to say to a host about one event. Render keeps the
// parts the host's event can carry and drops the others.
type Answer struct {
	// Context is model-visible text (the context packet or an orientation).
	Context string
	// Block asks the host to keep the agent going instead of stopping, with
	// Reason as the instruction. Only a stop event can carry it, and never
	// when the host says it is already continuing because of a stop hook.
	Block  bool
	Reason string
	// Reminder is one line shown to the user (the hosts' systemMessage).
	Reminder string
}

// Output is an answer in the host's own format.
type Output struct {
	Stdout   []byte   // exactly what to write to standard output
	ExitCode int      // always 0: a hook never fails its host
	Dropped  []string // the parts of the Answer the event could not carry, and why, for the hooks log
}

// Empty returns the answer that says nothing to host h: no output for Claude
// and Codex, an empty JSON object for Gemini (which reads standard error when
// standard output is empty).
func Empty(h Host) Output {
	if h == Gemini {
		return Output{Stdout: []byte("{}\n")}
	}
	return Output{}
}

// wire is the JSON every host reads; fields appear in this order.
type wire struct {
	Decision      string    `json:"decision,omitempty"`
	Reason        string    `json:"reason,omitempty"`
	SystemMessage string    `json:"systemMessage,omitempty"`
	Specific      *specific `json:"hookSpecificOutput,omitempty"`
}

type specific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext"`
}

// Render writes answer a to event e in e.Host's format. It never fails: a
// part the event cannot carry is left out and named in Output.Dropped, a
// context over MaxContext is cut (Truncate) and the cut named there too.
//
// Per host: Claude and Codex read context from hookSpecificOutput (Codex
// always gets JSON, since stdout that looks like JSON but does not parse
// fails its hook); Gemini always gets one JSON object; a stop event blocks
// with decision "block" (Gemini AfterAgent: "deny") and a reason; the
// reminder is a systemMessage where the host shows it.
func Render(e Event, a Answer) Output {
	s, ok := lookup(e.Host, e.HostEvent)
	if !ok && e.HostEvent == "" {
		s, ok = specOf(e.Host, e.Name)
	}
	if !ok {
		out := Empty(e.Host)
		if a != (Answer{}) {
			out.Dropped = append(out.Dropped, fmt.Sprintf("answer: %s event %q is not handled", e.Host, e.HostEvent))
		}
		return out
	}
	var w wire
	var dropped []string
	if a.Block {
		reason := strings.TrimSpace(a.Reason)
		switch {
		case s.block == "":
			dropped = append(dropped, "block: awr blocks only a stop event, not "+s.wire)
		case e.StopHookActive:
			dropped = append(dropped, "block: stop_hook_active is set, the host is already continuing")
		case reason == "":
			dropped = append(dropped, "block: no reason")
		default:
			if len(reason) > MaxContext {
				reason = Truncate(reason, MaxContext)
				dropped = append(dropped, fmt.Sprintf("reason: cut to %d bytes", MaxContext))
			}
			w.Decision, w.Reason = s.block, reason
		}
	} else if a.Reason != "" {
		dropped = append(dropped, "reason: given without block")
	}
	if a.Context != "" {
		switch {
		case !s.context:
			dropped = append(dropped, "context: "+string(e.Host)+" "+s.wire+" has no context field")
		default:
			text := a.Context
			if len(text) > MaxContext {
				text = Truncate(text, MaxContext)
				dropped = append(dropped, fmt.Sprintf("context: cut from %d to %d bytes", len(a.Context), MaxContext))
			}
			w.Specific = &specific{HookEventName: s.wire, AdditionalContext: text}
		}
	}
	if line := OneLine(a.Reminder); line != "" {
		if s.reminder {
			w.SystemMessage = line
		} else {
			dropped = append(dropped, "reminder: "+string(e.Host)+" "+s.wire+" shows no message")
		}
	}
	if w == (wire{}) {
		out := Empty(e.Host)
		out.Dropped = dropped
		return out
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(w) // strings only: cannot fail
	return Output{Stdout: buf.Bytes(), Dropped: dropped}
}

// OneLine folds s to one line of at most MaxReminder bytes: line breaks and
// tabs become spaces, runs of spaces one, the ends trimmed, and an ellipsis
// marks a cut.
func OneLine(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if len(s) <= MaxReminder {
		return s
	}
	const ellipsis = "…"
	cut := MaxReminder - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + ellipsis
}

// Part is one piece of a context, in order of importance: the first parts
// matter most. An optional part may be dropped whole to fit a limit.
type Part struct {
	Text     string
	Optional bool
}

// Fitted is the result of Fit.
type Fitted struct {
	Text      string
	Dropped   []int // indexes of the optional parts left out, in increasing order
	Truncated bool  // the kept parts still did not fit and Truncate cut them
}

// partSep joins the parts of a context.
const partSep = "\n\n"

// Fit joins parts (separated by a blank line, empty parts skipped) into a
// text of at most limit bytes. It first drops optional parts whole, the last
// one first; only when the required parts alone exceed limit does it cut
// the text with Truncate, which marks the cut.
func Fit(parts []Part, limit int) Fitted {
	keep := make([]bool, len(parts))
	for i, p := range parts {
		keep[i] = p.Text != ""
	}
	join := func() string {
		var b strings.Builder
		for i, p := range parts {
			if !keep[i] {
				continue
			}
			if b.Len() > 0 {
				b.WriteString(partSep)
			}
			b.WriteString(p.Text)
		}
		return b.String()
	}
	var f Fitted
	text := join()
	for i := len(parts) - 1; i >= 0 && len(text) > limit; i-- {
		if keep[i] && parts[i].Optional {
			keep[i] = false
			text = join()
		}
	}
	for i, p := range parts {
		if p.Optional && p.Text != "" && !keep[i] {
			f.Dropped = append(f.Dropped, i)
		}
	}
	if len(text) > limit {
		text = Truncate(text, limit)
		f.Truncated = true
	}
	f.Text = text
	return f
}

// Truncate cuts s to at most limit bytes, at a rune boundary (at a line
// break when one falls in the last quarter kept), and ends it with a line
// saying it was cut and how long the whole was. s within limit is returned
// as is; a limit too small for the marker gets a bare cut.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	if limit <= 0 {
		return ""
	}
	marker := fmt.Sprintf("\n[truncated by awr: the full text is %d bytes, over the %d-byte hook limit]", len(s), limit)
	keep := limit - len(marker)
	if keep <= 0 {
		return cutRunes(s, limit)
	}
	head := cutRunes(s, keep)
	if nl := strings.LastIndexByte(head, '\n'); nl >= keep-keep/4 {
		head = head[:nl]
	}
	return head + marker
}

// cutRunes returns the longest prefix of s of at most n bytes that ends at a
// rune boundary.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
