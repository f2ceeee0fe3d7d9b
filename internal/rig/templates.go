package rig

import (
	"github.com/awr-dev/awr/internal/lazyre"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/shellwords"
)

// Runtime is how a kind of agent CLI is started and resumed.
type Runtime struct {
	Name string
	// Start launches a new conversation primed with the context file.
	Start string
	// Resume reopens conversation {conversation}.
	Resume string
	// PreassignsConversation: the start command takes the conversation id
	// awr chooses, so awr knows it before the agent reports it.
	PreassignsConversation bool
}

// Runtimes are the shipped defaults. A seat's own --command and
// --resume-command replace them.
var Runtimes = map[string]Runtime{
	events.RuntimeGeneric: {Name: events.RuntimeGeneric, PreassignsConversation: true},
	events.RuntimeClaude: {Name: events.RuntimeClaude,
		Start:                  `claude --session-id {conversation} "$(cat {context_file})"`,
		Resume:                 `claude --resume {conversation} "$(cat {context_file})"`,
		PreassignsConversation: true},
	events.RuntimeCodex: {Name: events.RuntimeCodex,
		Start:  `codex "$(cat {context_file})"`,
		Resume: `codex resume {conversation} "$(cat {context_file})"`},
}

// seatCommands returns the seat's start and resume templates: its own, else
// its runtime's defaults.
func seatCommands(s *events.SeatDeclared) (start, resume string) {
	rt := Runtimes[s.Runtime]
	start, resume = rt.Start, rt.Resume
	if s.Command != "" {
		start = s.Command
	}
	if s.ResumeCommand != "" {
		resume = s.ResumeCommand
	}
	return start, resume
}

var placeholderRE = lazyre.New(`\$?\{([a-z_]+)\}`)

// render fills a command template. Values are single-quoted for the shell,
// so a path or id can never break out of its argument.
func render(tmpl string, vars map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(tmpl, func(m string) string {
		if strings.HasPrefix(m, "$") {
			return m
		}
		v, ok := vars[m[1:len(m)-1]]
		if !ok {
			return m
		}
		return shellwords.Quote(v)
	})
}

// renderText fills a message template without quoting.
func renderText(tmpl string, vars map[string]string) string {
	return placeholderRE.ReplaceAllStringFunc(tmpl, func(m string) string {
		if strings.HasPrefix(m, "$") {
			return m
		}
		if v, ok := vars[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// program returns the program a rendered command runs, when it can be told
// without a shell: the first word of a command that starts with a plain
// word (no assignment, quote, substitution or redirection).
func program(cmd string) (string, bool) {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return "", false
	}
	w := f[0]
	if strings.ContainsAny(w, "=$`'\"(){}<>|;&*?[]~\\") {
		return "", false
	}
	switch w {
	case "exec", "env", "cd", "sh", "bash", "eval", ".", "source", "command", "nohup", "time":
		return "", false
	}
	return w, true
}

// findProgram reports whether the command's program exists, looking it up
// on path (relative names against cwd). It answers true when the program
// cannot be told without running a shell.
func findProgram(cmd, cwd, path string) (string, bool) {
	w, ok := program(cmd)
	if !ok {
		return "", true
	}
	if strings.Contains(w, "/") {
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		st, err := os.Stat(p)
		return w, err == nil && !st.IsDir() && st.Mode()&0o111 != 0
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		if p, err := exec.LookPath(filepath.Join(dir, w)); err == nil && p != "" {
			return w, true
		}
	}
	return w, false
}
