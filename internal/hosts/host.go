package hosts

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
)

// Host names an agent host whose hooks awr answers. The value is the one the
// CLI's --client flag takes.
type Host string

// The hosts awr supports.
const (
	Claude   Host = "claude"   // Claude Code
	Codex    Host = "codex"    // OpenAI Codex CLI
	Gemini   Host = "gemini"   // Google Gemini CLI
	OpenCode Host = "opencode" // OpenCode (sst), through awr's plugin
)

// Hosts returns every supported host, in a fixed order.
func Hosts() []Host { return []Host{Claude, Codex, Gemini, OpenCode} }

// ErrUnknownHost is the cause of the error for a host awr does not support.
var ErrUnknownHost = errors.New("unknown host")

// ParseHost returns the Host named by s (case and surrounding blanks
// ignored).
//
// Errors: InvalidInput wrapping ErrUnknownHost for any other name.
func ParseHost(s string) (Host, error) {
	h := Host(strings.ToLower(strings.TrimSpace(s)))
	if h.valid() {
		return h, nil
	}
	return "", fault.Wrap(fault.InvalidInput, ErrUnknownHost, "parse host %q", s).
		With("host", s).WithHint("awr client install --help")
}

func (h Host) valid() bool { return h == Claude || h == Codex || h == Gemini || h == OpenCode }

// Name is a hook event in awr's own vocabulary, the same for every host.
type Name string

// The events awr handles. Each host calls them by its own names; see
// HostEvent.
const (
	// SessionStart: a conversation starts, resumes, is cleared, compacted
	// (Claude, Codex) or forked (Claude). Context can be injected.
	SessionStart Name = "session_start"
	// BeforeAgent: the user submitted a prompt (Claude and Codex
	// UserPromptSubmit, Gemini BeforeAgent). Context can be appended.
	BeforeAgent Name = "before_agent"
	// PreCompact: the host is about to compact the conversation (Claude and
	// Codex PreCompact, Gemini PreCompress).
	PreCompact Name = "pre_compact"
	// PostCompact: compaction finished (Claude and Codex PostCompact).
	PostCompact Name = "post_compact"
	// Stop: the agent finished its turn (Claude and Codex Stop, Gemini
	// AfterAgent). The host can be asked to continue.
	Stop Name = "stop"
	// SessionEnd: the conversation ends.
	SessionEnd Name = "session_end"
)

// spec describes one host event: its wire name, awr's name, what the payload
// must carry beyond the common fields, what an answer may carry, and how awr
// installs it.
type spec struct {
	host Host
	wire string // hook_event_name as the host sends it and as its settings key it
	name Name

	requires []string // fields required beyond session_id, cwd, hook_event_name
	bools    []string // required fields that are JSON booleans

	context  bool   // hookSpecificOutput.additionalContext reaches the model
	reminder bool   // systemMessage reaches the user
	block    string // the decision value that keeps the agent going; "" when the event cannot

	install bool // awr installs a hook for this event
	matcher bool // the host filters this event by matcher (awr writes "*")
	timeout int  // the timeout awr writes, in the host's unit (seconds; milliseconds for Gemini)
}

// specs is every host event awr understands. A payload naming any other event
// is refused with ErrUnknownEvent.
var specs = []spec{
	// Claude Code ("Hooks reference").
	{host: Claude, wire: "SessionStart", name: SessionStart, requires: []string{"source"},
		context: true, reminder: true, install: true, matcher: true, timeout: 10},
	{host: Claude, wire: "UserPromptSubmit", name: BeforeAgent,
		context: true, reminder: true},
	// Claude discards a PreCompact hook's systemMessage: no reminder there.
	{host: Claude, wire: "PreCompact", name: PreCompact, requires: []string{"trigger"},
		install: true, matcher: true, timeout: 5},
	{host: Claude, wire: "PostCompact", name: PostCompact, requires: []string{"trigger"}},
	// Context on Claude's Stop would continue the turn: only block carries text.
	{host: Claude, wire: "Stop", name: Stop, bools: []string{"stop_hook_active"},
		reminder: true, block: "block", install: true, timeout: 5},
	// SessionEnd hooks share a 1.5 s budget that a longer per-hook timeout raises.
	{host: Claude, wire: "SessionEnd", name: SessionEnd, requires: []string{"reason"},
		install: true, matcher: true, timeout: 3},

	// Codex ("Hooks"). turn_id is sent on turn-scoped events only.
	{host: Codex, wire: "SessionStart", name: SessionStart, requires: []string{"source"},
		context: true, reminder: true, install: true, matcher: true, timeout: 10},
	{host: Codex, wire: "UserPromptSubmit", name: BeforeAgent, requires: []string{"turn_id"},
		context: true, reminder: true},
	{host: Codex, wire: "PreCompact", name: PreCompact, requires: []string{"turn_id", "trigger"},
		reminder: true, install: true, matcher: true, timeout: 5},
	// PostCompact output has no context field.
	{host: Codex, wire: "PostCompact", name: PostCompact, requires: []string{"turn_id", "trigger"},
		reminder: true},
	{host: Codex, wire: "Stop", name: Stop, requires: []string{"turn_id"}, bools: []string{"stop_hook_active"},
		reminder: true, block: "block", install: true, timeout: 5},
	// SessionEnd output is advisory; Codex caps its timeout at 3 s.
	{host: Codex, wire: "SessionEnd", name: SessionEnd, requires: []string{"reason"},
		install: true, matcher: true, timeout: 3},

	// Gemini CLI ("Hooks reference"). Timeouts are milliseconds.
	{host: Gemini, wire: "SessionStart", name: SessionStart, requires: []string{"source"},
		context: true, reminder: true, install: true, matcher: true, timeout: 10000},
	{host: Gemini, wire: "BeforeAgent", name: BeforeAgent,
		context: true, reminder: true, install: true, matcher: true, timeout: 5000},
	// PreCompress is advisory and asynchronous: only systemMessage.
	{host: Gemini, wire: "PreCompress", name: PreCompact, requires: []string{"trigger"},
		reminder: true, install: true, matcher: true, timeout: 5000},
	{host: Gemini, wire: "AfterAgent", name: Stop, bools: []string{"stop_hook_active"},
		reminder: true, block: "deny"},
	{host: Gemini, wire: "SessionEnd", name: SessionEnd, requires: []string{"reason"},
		reminder: true, install: true, matcher: true, timeout: 3000},

	// OpenCode has no hook commands: awr's plugin (plugin.go) turns its
	// plugin hooks into these events, named as Claude names them, and adds
	// a context to the user's message as a synthetic part. SessionStart:
	// the first message of a session in an OpenCode process (source
	// startup when the process created the session, else resume);
	// UserPromptSubmit: every later message; PreCompact:
	// experimental.session.compacting; SessionEnd (reason exit): each
	// session that started in this process, when OpenCode disposes of
	// the plugin (the end of `opencode run`, the TUI's exit). No stop is
	// sent: a recorded stop would end the compaction a later message
	// gives the packet back for. timeout is the plugin's own bound on one
	// awr run, in seconds.
	{host: OpenCode, wire: "SessionStart", name: SessionStart, requires: []string{"source"},
		context: true, install: true, timeout: 10},
	{host: OpenCode, wire: "UserPromptSubmit", name: BeforeAgent,
		context: true, install: true, timeout: 10},
	{host: OpenCode, wire: "PreCompact", name: PreCompact, install: true, timeout: 10},
	{host: OpenCode, wire: "SessionEnd", name: SessionEnd, requires: []string{"reason"}, install: true, timeout: 10},
}

// lookup returns the spec of host h's event called wire.
func lookup(h Host, wire string) (spec, bool) {
	for _, s := range specs {
		if s.host == h && s.wire == wire {
			return s, true
		}
	}
	return spec{}, false
}

// specOf returns the spec of awr's event n on host h.
func specOf(h Host, n Name) (spec, bool) {
	for _, s := range specs {
		if s.host == h && s.name == n {
			return s, true
		}
	}
	return spec{}, false
}

// HostEvent returns the name host h gives awr's event n (its
// hook_event_name and its settings key), or "" when h has no such event.
func HostEvent(h Host, n Name) string {
	s, _ := specOf(h, n)
	return s.wire
}

// Installed returns the host event names awr installs a hook for on host h,
// in the order they are written to the settings file.
func Installed(h Host) []string {
	var out []string
	for _, s := range specs {
		if s.host == h && s.install {
			out = append(out, s.wire)
		}
	}
	return out
}

// Capability is what an answer to one host event can carry.
type Capability struct {
	Context  bool // model-visible context
	Reminder bool // a one-line message shown to the user
	Block    bool // a request to keep the agent going
}

// CapabilityOf returns what an answer to host h's event n can carry (all
// false for an event h does not have).
func CapabilityOf(h Host, n Name) Capability {
	s, ok := specOf(h, n)
	if !ok {
		return Capability{}
	}
	return Capability{Context: s.context, Reminder: s.reminder, Block: s.block != ""}
}

// ResumeKeepsContext reports whether host h's resumed conversation still
// holds the context its hooks gave at its starts: Claude Code and Codex
// replay the whole transcript, awr's texts included, and OpenCode keeps
// the part awr's plugin added to a user's message with that message.
// Gemini CLI 0.61.0 does not: a resumed conversation leaves out every
// user turn whose text begins with <hook_context> (its
// convertSessionToClientHistory), which is where a SessionStart's context
// goes (put before the prompt under -p, a turn of its own in the
// interactive session), while it keeps a turn whose prompt comes first,
// with the context a BeforeAgent appended to it (StartGoesWithPrompt).
func ResumeKeepsContext(h Host) bool { return h != Gemini }

// KeptAtResume reports whether the context host h's hook event n gave
// stays in the conversation when it is resumed: every hook's, except on
// Gemini CLI, which keeps only a BeforeAgent's (appended to the
// prompt's own turn; ResumeKeepsContext).
func KeptAtResume(h Host, n Name) bool { return h != Gemini || n == BeforeAgent }

// StartGoesWithPrompt reports whether the context for host h's start of
// source goes with the conversation's next prompt instead of with the
// start: Gemini CLI 0.61.0's /clear sends the model none of what its
// SessionStart (source clear) answered, only showing its systemMessage.
func StartGoesWithPrompt(h Host, source string) bool {
	return h == Gemini && source == "clear"
}

// ClearEndsSilently reports whether host h's start of source continues a
// conversation that no hook ended or named: Codex 0.169.0's /clear runs
// no hook for the thread it clears, and the new thread's SessionStart
// (source clear, with its first prompt) names no other. Only the host
// process that ran both threads' hooks ties them.
func ClearEndsSilently(h Host, source string) bool {
	return h == Codex && source == "clear"
}

// ForkedFrom returns the conversation id a Claude Code command line forks
// (`claude --resume ID --fork-session`, `-r ID`, `--resume=ID`), or ""
// for any other command line: Claude's SessionStart for a fork names only
// the new conversation, and its transcript is written after the hook ran.
func ForkedFrom(args []string) string {
	fork, from := false, ""
	for i, a := range args {
		switch {
		case a == "--fork-session":
			fork = true
		case (a == "--resume" || a == "-r") && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-"):
			from = args[i+1]
		case strings.HasPrefix(a, "--resume="):
			from = strings.TrimPrefix(a, "--resume=")
		}
	}
	if !fork || !validID(from) {
		return ""
	}
	return from
}

// CodexForkedFrom returns the thread id a Codex command line forks
// (`codex exec fork ID [PROMPT]`, `codex fork ID`), or "" for any other
// command line.
func CodexForkedFrom(args []string) string {
	// The native program, or node running Codex's npm launcher.
	if len(args) == 0 || !strings.Contains(filepath.Base(args[0]), "codex") &&
		(len(args) < 2 || !strings.Contains(filepath.Base(args[1]), "codex")) {
		return ""
	}
	for i, a := range args[1:] {
		if a == "fork" && i+2 < len(args) && validID(args[i+2]) && !strings.HasPrefix(args[i+2], "-") {
			return args[i+2]
		}
	}
	return ""
}

// validID reports whether s can be a host's conversation id in a key.
func validID(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
