package hosts

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/shellwords"
)

// Scope is where a host's hooks are installed: for one project or for every
// project of the user.
type Scope string

// The install scopes.
const (
	Project Scope = "project"
	User    Scope = "user"
)

// ErrUnknownScope is the cause of the error for a scope other than project
// and user.
var ErrUnknownScope = errors.New("unknown scope")

// ParseScope returns the Scope named by s; "" is Project.
//
// Errors: InvalidInput wrapping ErrUnknownScope.
func ParseScope(s string) (Scope, error) {
	switch sc := Scope(strings.ToLower(strings.TrimSpace(s))); sc {
	case "":
		return Project, nil
	case Project, User:
		return sc, nil
	}
	return "", fault.Wrap(fault.InvalidInput, ErrUnknownScope, "parse scope %q", s).
		With("scope", s).WithHint("awr client install --help")
}

// SettingsPath returns the file holding host h's hooks at scope sc. Project
// scope is under projectDir: .claude/settings.json, .codex/hooks.json,
// .gemini/settings.json, and OpenCode's plugin .opencode/plugins/awr.js.
// User scope follows each host's documented home:
// $CLAUDE_CONFIG_DIR/settings.json (default ~/.claude), $CODEX_HOME/hooks.json
// (default ~/.codex), $GEMINI_CLI_HOME/.gemini/settings.json (default the
// home directory), $XDG_CONFIG_HOME/opencode/plugins/awr.js (default
// ~/.config). getenv reads the environment (os.Getenv in production;
// nil reads nothing).
//
// Errors: InvalidInput for an unknown host or scope, or when the directory
// the path is built from is empty or not absolute.
func SettingsPath(h Host, sc Scope, projectDir, home string, getenv func(string) string) (string, error) {
	const op = "settings path"
	if !h.valid() {
		return "", fault.Wrap(fault.InvalidInput, ErrUnknownHost, "%s: host %q", op, h).With("host", string(h))
	}
	env := func(k string) string {
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
	abs := func(what, dir string) error {
		if dir == "" || !filepath.IsAbs(dir) {
			return fault.New(fault.InvalidInput, "%s: %s %q is not an absolute directory", op, what, dir).With(what, dir)
		}
		return nil
	}
	switch sc {
	case Project:
		if err := abs("project_dir", projectDir); err != nil {
			return "", err
		}
		switch h {
		case Claude:
			return filepath.Join(projectDir, ".claude", "settings.json"), nil
		case Codex:
			return filepath.Join(projectDir, ".codex", "hooks.json"), nil
		case OpenCode:
			return filepath.Join(projectDir, ".opencode", "plugins", PluginFile), nil
		default:
			return filepath.Join(projectDir, ".gemini", "settings.json"), nil
		}
	case User:
		dir, name, base := "", "", ""
		switch h {
		case Claude:
			dir, base, name = env("CLAUDE_CONFIG_DIR"), ".claude", "settings.json"
		case Codex:
			dir, base, name = env("CODEX_HOME"), ".codex", "hooks.json"
		case OpenCode:
			if d := env("XDG_CONFIG_HOME"); d != "" {
				dir = filepath.Join(d, "opencode", "plugins")
			}
			base, name = filepath.Join(".config", "opencode", "plugins"), PluginFile
		default:
			if d := env("GEMINI_CLI_HOME"); d != "" {
				dir = filepath.Join(d, ".gemini")
			}
			base, name = ".gemini", "settings.json"
		}
		if dir == "" {
			if err := abs("home", home); err != nil {
				return "", err
			}
			dir = filepath.Join(home, base)
		} else if err := abs("config_dir", dir); err != nil {
			return "", err
		}
		return filepath.Join(dir, name), nil
	}
	return "", fault.Wrap(fault.InvalidInput, ErrUnknownScope, "%s: scope %q", op, sc).With("scope", string(sc))
}

// The causes of a refused settings file.
var (
	ErrSettingsSyntax = errors.New("settings file is not valid JSON")
	ErrSettingsShape  = errors.New("settings file does not have the hooks shape")
	ErrNotAwrCommand  = errors.New("command is not an awr hook command")
)

// Install returns settings file bytes with awr's hooks for host h, running
// command (for example "awr client hook --client claude"), merged into
// existing (nil or blank for a file that does not exist yet). Every other
// key, hook and handler is kept where it was; awr's matcher group is
// appended at the end of each event's list, or replaced where it already
// is, so other tools' entries keep their positions (Codex records hook trust
// by position). awr's handlers under events it no longer installs are
// removed. The file is written indented like existing (two spaces when
// new), with its line endings. Installing twice gives identical bytes; when nothing changes,
// existing is returned as is. For OpenCode the file is awr's plugin
// (Plugin), written whole.
//
// Errors: InvalidInput wrapping ErrNotAwrCommand when IsAwrCommand(command,
// nil) is false; wrapping ErrSettingsSyntax (a *SyntaxError names the line
// and column, also in details) for invalid JSON, comments included;
// wrapping ErrSettingsShape (detail "path") when the root, "hooks", an
// event's value or a group's "hooks" has the wrong type, or, for OpenCode,
// when the plugin's path holds a file awr did not write.
func Install(h Host, existing []byte, command string) ([]byte, error) {
	const op = "install hooks"
	if !h.valid() {
		return nil, fault.Wrap(fault.InvalidInput, ErrUnknownHost, "%s: host %q", op, h).With("host", string(h))
	}
	if strings.ContainsAny(command, "\x00\r\n") || !IsAwrCommand(command, nil) {
		return nil, fault.Wrap(fault.InvalidInput, ErrNotAwrCommand, "%s: %q", op, command).
			With("command", command).WithHint("awr client install --help")
	}
	if h == OpenCode {
		return installPlugin(op, existing, command)
	}
	doc, err := load(op, existing)
	if err != nil {
		return nil, err
	}
	hooks := doc.root.get("hooks")
	if hooks == nil {
		hooks = object()
		doc.root.set("hooks", hooks)
	}
	wanted := map[string]bool{}
	for _, ev := range Installed(h) {
		wanted[ev] = true
		s, _ := lookup(h, ev)
		list := hooks.get(ev)
		if list == nil {
			list = &node{kind: '['}
			hooks.set(ev, list)
		}
		want := group(h, s, command)
		if i, only := awrGroup(list); only {
			if list.items[i].compact() != want.compact() {
				list.items[i] = want
			}
			continue
		}
		stripAwr(list)
		list.items = append(list.items, want)
	}
	for _, m := range append([]member(nil), hooks.members...) {
		if !wanted[m.key] && m.val.kind == '[' && stripAwr(m.val) && len(m.val.items) == 0 {
			hooks.remove(m.key)
		}
	}
	return doc.bytes(), nil
}

// Uninstall returns existing without awr's hook handlers (those for which
// IsAwrCommand holds). A matcher group left without handlers is removed, an
// event left without groups is removed, and "hooks" is removed when that
// emptied it; nothing else changes. A file without awr handlers is returned
// as is, and so is nil. OpenCode's plugin file, when it is awr's
// (IsPlugin), gives nil: the file goes.
//
// Errors: as Install for invalid JSON or a wrong shape.
func Uninstall(h Host, existing []byte) ([]byte, error) {
	const op = "uninstall hooks"
	if !h.valid() {
		return nil, fault.Wrap(fault.InvalidInput, ErrUnknownHost, "%s: host %q", op, h).With("host", string(h))
	}
	if len(bytes.TrimSpace(existing)) == 0 {
		return existing, nil
	}
	if h == OpenCode {
		// The plugin file is awr's whole: without awr, nothing is left.
		if IsPlugin(existing) {
			return nil, nil
		}
		return existing, nil
	}
	doc, err := load(op, existing)
	if err != nil {
		return nil, err
	}
	hooks := doc.root.get("hooks")
	if hooks == nil {
		return existing, nil
	}
	changed := false
	for _, m := range append([]member(nil), hooks.members...) {
		if m.val.kind == '[' && stripAwr(m.val) {
			changed = true
			if len(m.val.items) == 0 {
				hooks.remove(m.key)
			}
		}
	}
	if changed && len(hooks.members) == 0 {
		doc.root.remove("hooks")
	}
	return doc.bytes(), nil
}

// IsAwrCommand reports whether a hook handler runs awr's hook: its program
// (after any leading VAR=value assignments) is named awr (any directory,
// quoted or not, awr.exe on Windows) and its next two arguments are client
// and hook. args is the handler's exec-form argument list (Claude Code's
// "args"); with args, command is the program itself.
func IsAwrCommand(command string, args []string) bool {
	var words []string
	if len(args) > 0 {
		words = append([]string{command}, args...)
		for len(words) > 0 && isAssignment(words[0]) {
			words = words[1:]
		}
	} else {
		words = ProgramWords(command)
	}
	if len(words) < 3 {
		return false
	}
	prog := words[0]
	if i := strings.LastIndexAny(prog, `/\`); i >= 0 {
		prog = prog[i+1:]
	}
	prog = strings.TrimSuffix(strings.ToLower(prog), ".exe")
	return prog == "awr" && words[1] == "client" && words[2] == "hook"
}

// ProgramWords returns the words of a hook command line as the host's
// shell splits them (shellwords.Command), without leading VAR=value
// assignments: the program first.
func ProgramWords(command string) []string {
	words := shellwords.Command(command)
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	return words
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for j, r := range w[:i] {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || j > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// group returns awr's matcher group for event s.
func group(h Host, s spec, command string) *node {
	handler := object()
	if h == Gemini {
		handler.members = append(handler.members, member{"name", str("awr")})
	}
	handler.members = append(handler.members,
		member{"type", str("command")},
		member{"command", str(command)},
		member{"timeout", num(s.timeout)},
	)
	g := object()
	if s.matcher {
		g.members = append(g.members, member{"matcher", str("*")})
	}
	g.members = append(g.members, member{"hooks", &node{kind: '[', items: []*node{handler}}})
	return g
}

// isAwrHandler reports whether a handler object runs awr's hook.
func isAwrHandler(n *node) bool {
	cmd, ok := n.get("command").text()
	if !ok {
		return false
	}
	var args []string
	if a := n.get("args"); a != nil && a.kind == '[' {
		for _, it := range a.items {
			s, ok := it.text()
			if !ok {
				return false
			}
			args = append(args, s)
		}
	}
	return IsAwrCommand(cmd, args)
}

// awrGroup returns the index of the one matcher group of list that holds
// awr's handler, with only true when that group holds nothing else and no
// other group holds an awr handler.
func awrGroup(list *node) (int, bool) {
	at, awrGroups, mixed := -1, 0, false
	for i, g := range list.items {
		hs := g.get("hooks")
		if hs == nil || hs.kind != '[' {
			continue
		}
		n := 0
		for _, hd := range hs.items {
			if isAwrHandler(hd) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		awrGroups++
		at = i
		if n != len(hs.items) {
			mixed = true
		}
	}
	return at, awrGroups == 1 && !mixed
}

// stripAwr removes awr's handlers from every group of list, and the groups
// that removal emptied. It reports whether it removed anything.
func stripAwr(list *node) bool {
	removed := false
	groups := list.items[:0]
	for _, g := range list.items {
		hs := g.get("hooks")
		if hs == nil || hs.kind != '[' {
			groups = append(groups, g)
			continue
		}
		kept := hs.items[:0]
		for _, hd := range hs.items {
			if isAwrHandler(hd) {
				removed = true
				continue
			}
			kept = append(kept, hd)
		}
		emptied := len(kept) == 0 && len(hs.items) > 0
		hs.items = kept
		if !emptied {
			groups = append(groups, g)
		}
	}
	list.items = groups
	return removed
}

// document is a parsed settings file.
type document struct {
	root     *node
	original []byte // nil for a new file
	bom      bool
	indent   string
	newline  string
	before   string // root.compact() as read
}

const bom = "\xef\xbb\xbf"

// load parses a settings file and checks the shape of its hooks.
func load(op string, b []byte) (*document, error) {
	d := &document{indent: "  ", newline: "\n"}
	if len(bytes.TrimSpace(b)) == 0 {
		d.root = object()
		d.before = d.root.compact()
		return d, nil
	}
	d.original = b
	if bytes.HasPrefix(b, []byte(bom)) {
		d.bom, b = true, b[len(bom):]
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		off := offsetOf(err, len(b))
		line, col := position(b, off)
		msg := err.Error()
		if off >= 0 && off < len(b) && b[off] == '/' {
			msg += " (comments are not JSON)"
		}
		se := &SyntaxError{Line: line, Column: col, Msg: msg, kind: ErrSettingsSyntax}
		return nil, fault.Wrap(fault.InvalidInput, se, "%s: settings file is not valid JSON", op).
			With("line", line).With("column", col)
	}
	root, err := parseTree(b)
	if err != nil {
		return nil, fault.Wrap(fault.InvalidInput, ErrSettingsSyntax, "%s: %s", op, err.Error())
	}
	if root.kind != '{' {
		return nil, shape(op, "(root)", "is not a JSON object")
	}
	if hooks := root.get("hooks"); hooks != nil {
		if hooks.kind != '{' {
			return nil, shape(op, "hooks", "is not an object")
		}
		for _, m := range hooks.members {
			if m.val.kind != '[' {
				return nil, shape(op, "hooks."+m.key, "is not a list")
			}
			for i, g := range m.val.items {
				if g.kind != '{' {
					continue // not a group: left to the host to judge, never touched
				}
				if hs := g.get("hooks"); hs != nil && hs.kind != '[' {
					return nil, shape(op, "hooks."+m.key+"["+itoa(i)+"].hooks", "is not a list")
				}
			}
		}
	}
	d.root = root
	d.indent = detectIndent(b)
	if bytes.Contains(b, []byte("\r\n")) {
		d.newline = "\r\n"
	}
	d.before = root.compact()
	return d, nil
}

func shape(op, path, why string) error {
	return fault.Wrap(fault.InvalidInput, ErrSettingsShape, "%s: settings %s %s", op, path, why).With("path", path)
}

// bytes encodes the document, or returns the original bytes when nothing
// changed.
func (d *document) bytes() []byte {
	if d.original != nil && d.root.compact() == d.before {
		return d.original
	}
	out := d.root.encode(d.indent, d.newline)
	if d.bom {
		out = append([]byte(bom), out...)
	}
	return out
}

func itoa(i int) string {
	return strings.TrimSpace(num(i).raw)
}
