package project

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/hosts"
)

// ClientInstallRequest is `awr client install`: it previews, and with
// Accept writes, awr's hooks into a host's settings file.
type ClientInstallRequest struct {
	Client      string `name:"client" required:"" enum:"claude,codex,gemini" json:"client" help:"The host: claude, codex or gemini." placeholder:"HOST"`
	Scope       string `name:"scope" default:"project" enum:"project,user" json:"scope,omitempty" help:"Install for this project (default) or for every project of the user." placeholder:"SCOPE"`
	Accept      bool   `name:"accept" json:"accept,omitempty" help:"Write the file the preview shows."`
	Fingerprint string `name:"fingerprint" json:"fingerprint,omitempty" help:"The fingerprint the preview printed: --accept refuses with SourceStale if the file changed since." placeholder:"FP"`
	Command     string `name:"command" json:"command,omitempty" help:"The hook command line to write (default: this awr binary's absolute path, then client hook --client HOST)." placeholder:"CMDLINE"`
	Force       bool   `name:"force" json:"force,omitempty" help:"Accept even when the hook command's awr binary does not answer."`
}

// ClientUninstallRequest is `awr client uninstall`: it previews, and with
// Accept writes, a host's settings file without awr's hooks.
type ClientUninstallRequest struct {
	Client      string `name:"client" required:"" enum:"claude,codex,gemini" json:"client" help:"The host: claude, codex or gemini." placeholder:"HOST"`
	Scope       string `name:"scope" default:"project" enum:"project,user" json:"scope,omitempty" help:"Uninstall from this project's settings (default) or from the user's." placeholder:"SCOPE"`
	Accept      bool   `name:"accept" json:"accept,omitempty" help:"Write the file the preview shows."`
	Fingerprint string `name:"fingerprint" json:"fingerprint,omitempty" help:"The fingerprint the preview printed: --accept refuses with SourceStale if the file changed since." placeholder:"FP"`
}

// The statuses of a host install or uninstall.
const (
	HostPreview     = "preview"     // nothing was written; Next accepts the change
	HostInstalled   = "installed"   // the file was written with awr's hooks
	HostUninstalled = "uninstalled" // the file was written without awr's hooks
	HostUnchanged   = "unchanged"   // the file already is what was asked; nothing written
)

// HostCheck is one check of an installed hook, in the manner of a doctor.
type HostCheck struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// HostInstallResult is the answer of `awr client install` and `awr client
// uninstall`.
type HostInstallResult struct {
	Client string `json:"client"`
	Scope  string `json:"scope"`
	// Path is the host's settings file.
	Path   string `json:"path"`
	Status string `json:"status"`
	// Changed says whether the resulting file differs from the file as
	// read: with Accept, whether it was written.
	Changed bool `json:"changed"`
	// Fingerprint identifies the file as read (hosts.Absent when it did
	// not exist); pass it back with --fingerprint.
	Fingerprint string `json:"fingerprint"`
	// Content is the resulting file's text.
	Content string `json:"content"`
	// Events are the host events awr hooks (install) or whose awr hooks
	// are removed (uninstall).
	Events []string `json:"events"`
	// Command is the hook command line written (install only).
	Command string      `json:"command,omitempty"`
	Checks  []HostCheck `json:"checks"`
	// Notes are the host's facts that matter after this change.
	Notes []string `json:"notes"`
	// Next is, for a preview, the complete command that accepts it.
	Next string `json:"next"`
}

// hookCheckTimeout bounds how long the hook command's awr binary may take
// to answer `version --json`.
const hookCheckTimeout = 3 * time.Second

// ClientInstall previews, and with Accept writes, awr's hooks merged into
// the settings file of the host at the scope: every other key and hook is
// kept, a second install changes nothing, and the write is atomic. The
// result's checks say whether the awr binary on the hook's command line
// exists and answers.
//
// Errors: InvalidInput for an unknown client or scope, a command that is
// not awr's hook command, a settings file that is not valid JSON (naming
// path:line:column) or not shaped like a hooks file, or, with Accept and
// without Force, a hook command whose binary does not answer; SourceStale
// when Fingerprint is given and the file changed since; Storage. Nothing
// is written on any error.
func (p *Project) ClientInstall(ctx context.Context, req ClientInstallRequest) (*HostInstallResult, error) {
	const op = "client install"
	h, sc, path, err := p.hostTarget(req.Client, req.Scope)
	if err != nil {
		return nil, err
	}
	command := strings.TrimSpace(req.Command)
	if command == "" {
		bin := p.opts.Rig.AwrBin
		if bin == "" {
			bin, _ = os.Executable()
		}
		if bin == "" {
			bin = "awr"
		}
		command = shellWord(bin) + " client hook --client " + string(h)
	}
	base := "awr client install --client " + string(h) + " --scope " + string(sc) + p.projectFlag(sc)
	if req.Command != "" {
		base += " --command " + shellWord(command)
	}
	existing, fp, err := hosts.ReadSettings(path)
	if err != nil {
		return nil, err
	}
	if err := checkSeen(path, fp, req.Fingerprint, base); err != nil {
		return nil, err
	}
	out, err := hosts.Install(h, existing, command)
	if err != nil {
		return nil, settingsError(op, path, base, err)
	}
	res := &HostInstallResult{Client: string(h), Scope: string(sc), Path: path, Fingerprint: fp,
		Content: string(out), Events: hosts.Installed(h), Command: command, Notes: hostNotes(h, sc),
		Changed: fp == hosts.Absent || !bytes.Equal(out, existing)}
	res.Checks = []HostCheck{checkHookCommand(ctx, command, p.dir)}
	switch {
	case !res.Changed:
		res.Status = HostUnchanged
		return res, nil
	case !req.Accept:
		res.Status, res.Next = HostPreview, base+" --accept --fingerprint "+fp
		return res, nil
	}
	if c := res.Checks[0]; !c.OK && !req.Force {
		return nil, fault.New(fault.InvalidInput, "%s: the hook command does not answer: %s; install awr there or pass --command with a working awr, then preview again, or add --force to install anyway", op, c.Detail).
			With("path", path).With("command", command).
			WithHint("%s", base)
	}
	if err := writeSettings(path, fp, out, base); err != nil {
		return nil, err
	}
	res.Status = HostInstalled
	return res, nil
}

// ClientUninstall previews, and with Accept writes, the host's settings
// file at the scope without awr's hook handlers; every other key and hook
// is kept. A file without awr's hooks (or no file) is unchanged.
//
// Errors: InvalidInput for an unknown client or scope or a settings file
// that is not valid JSON (naming path:line:column) or not shaped like a
// hooks file; SourceStale when Fingerprint is given and the file changed
// since; Storage. Nothing is written on any error.
func (p *Project) ClientUninstall(ctx context.Context, req ClientUninstallRequest) (*HostInstallResult, error) {
	const op = "client uninstall"
	h, sc, path, err := p.hostTarget(req.Client, req.Scope)
	if err != nil {
		return nil, err
	}
	base := "awr client uninstall --client " + string(h) + " --scope " + string(sc) + p.projectFlag(sc)
	existing, fp, err := hosts.ReadSettings(path)
	if err != nil {
		return nil, err
	}
	if err := checkSeen(path, fp, req.Fingerprint, base); err != nil {
		return nil, err
	}
	out, err := hosts.Uninstall(h, existing)
	if err != nil {
		return nil, settingsError(op, path, base, err)
	}
	res := &HostInstallResult{Client: string(h), Scope: string(sc), Path: path, Fingerprint: fp,
		Content: string(out), Events: awrEvents(h, existing), Checks: []HostCheck{}, Notes: []string{},
		Changed: fp != hosts.Absent && !bytes.Equal(out, existing)}
	switch {
	case !res.Changed:
		res.Status = HostUnchanged
		return res, nil
	case !req.Accept:
		res.Status, res.Next = HostPreview, base+" --accept --fingerprint "+fp
		return res, nil
	}
	if err := writeSettings(path, fp, out, base); err != nil {
		return nil, err
	}
	res.Status = HostUninstalled
	return res, nil
}

// hostTarget parses the client and scope and returns the settings file.
func (p *Project) hostTarget(client, scope string) (hosts.Host, hosts.Scope, string, error) {
	h, err := hosts.ParseHost(client)
	if err != nil {
		return "", "", "", err
	}
	sc, err := hosts.ParseScope(scope)
	if err != nil {
		return "", "", "", err
	}
	home, _ := os.UserHomeDir()
	path, err := hosts.SettingsPath(h, sc, p.dir, home, os.Getenv)
	if err != nil {
		return "", "", "", err
	}
	return h, sc, path, nil
}

// projectFlag returns " --project DIR" when a project-scope command run
// from the current directory would not reach this project.
func (p *Project) projectFlag(sc hosts.Scope) string {
	if sc != hosts.Project {
		return ""
	}
	if wd, err := os.Getwd(); err == nil {
		if abs, err := filepath.Abs(wd); err == nil && abs == p.dir {
			return ""
		}
	}
	return " --project " + shellWord(p.dir)
}

// checkSeen refuses a file whose fingerprint is not the one the preview
// printed.
func checkSeen(path, now, seen, preview string) error {
	if seen == "" || seen == now {
		return nil
	}
	return fault.New(fault.SourceStale, "check settings: %s changed since the preview", path).
		With("path", path).With("expected", seen).With("actual", now).
		WithHint("%s", preview)
}

// writeSettings replaces the settings file, after checking once more that it is
// still the file that was read.
func writeSettings(path, fp string, data []byte, preview string) error {
	if err := hosts.Unchanged(path, fp); err != nil {
		if fe := fault.As(err); fe.Code == fault.SourceStale {
			fe.WithHint("%s", preview)
		}
		return err
	}
	return hosts.WriteAtomic(path, data)
}

// settingsError names the file, and for invalid JSON the line and column,
// in an error of hosts.Install or hosts.Uninstall.
func settingsError(op, path, preview string, err error) error {
	var se *hosts.SyntaxError
	if errors.As(err, &se) {
		return fault.Wrap(fault.InvalidInput, syntaxCause{se}, "%s: %s:%d:%d: not valid JSON", op, path, se.Line, se.Column).
			With("path", path).With("line", se.Line).With("column", se.Column).
			WithHint("%s", preview)
	}
	if errors.Is(err, hosts.ErrSettingsShape) || errors.Is(err, hosts.ErrSettingsSyntax) {
		fe := fault.Wrap(fault.InvalidInput, err, "%s: %s", op, path).With("path", path)
		if d := fault.As(err).Details; d != nil && d["path"] != nil {
			fe.With("key", d["path"])
		}
		return fe
	}
	return err
}

// syntaxCause is a settings file's syntax error, said without its
// position (the message names it as path:line:column).
type syntaxCause struct{ se *hosts.SyntaxError }

func (e syntaxCause) Error() string { return e.se.Msg }
func (e syntaxCause) Unwrap() error { return e.se }

// hostNotes are the facts of host h that matter after awr's hooks were
// written into its settings file at scope sc.
func hostNotes(h hosts.Host, sc hosts.Scope) []string {
	switch h {
	case hosts.Codex:
		return []string{
			"codex runs a new or changed hook only once it is trusted: open /hooks in codex and review it",
			"codex runs a hook installed at both scopes twice; awr records the event once",
		}
	case hosts.Gemini:
		notes := []string{"gemini hook timeouts are in milliseconds; /hooks in gemini lists the hooks it loaded"}
		if sc == hosts.Project {
			notes = append(notes, "gemini warns before it runs a new or changed project hook")
		}
		return notes
	default:
		notes := []string{"claude code reloads its settings by itself; /hooks lists the hooks it runs"}
		if sc == hosts.Project {
			notes = append(notes, ".claude/settings.json is shared with the team: every teammate needs awr on PATH, or use --scope user")
		}
		return notes
	}
}

// awrEvents returns the events of a settings file that hold an awr hook
// handler: the ones awr installs first, in their order, then the others
// sorted.
func awrEvents(h hosts.Host, data []byte) []string {
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	found := map[string]bool{}
	if json.Unmarshal(data, &doc) == nil {
		for ev, groups := range doc.Hooks {
			for _, g := range groups {
				for _, hd := range g.Hooks {
					if hosts.IsAwrCommand(hd.Command, hd.Args) {
						found[ev] = true
					}
				}
			}
		}
	}
	out := []string{}
	for _, ev := range hosts.Installed(h) {
		if found[ev] {
			out = append(out, ev)
			delete(found, ev)
		}
	}
	rest := make([]string, 0, len(found))
	for ev := range found {
		rest = append(rest, ev)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// checkHookCommand is the doctor check of a hook command line: the awr
// binary it runs exists, is executable, and answers `version --json`
// within hookCheckTimeout. A relative program is looked up as the host
// would: on PATH (this process's), or under dir when it names a directory.
func checkHookCommand(ctx context.Context, command, dir string) HostCheck {
	c := HostCheck{Name: "hook_command"}
	words := commandWords(command)
	if len(words) == 0 {
		c.Detail = "the command line is empty"
		return c
	}
	prog := words[0]
	var bin string
	switch {
	case strings.ContainsAny(prog, "$`~"):
		c.Detail = fmt.Sprintf("%s is expanded by the host's shell; awr cannot check it", prog)
		return c
	case strings.ContainsRune(prog, filepath.Separator) || strings.ContainsRune(prog, '/'):
		bin = prog
		if !filepath.IsAbs(bin) {
			bin = filepath.Join(dir, bin)
		}
	default:
		found, err := exec.LookPath(prog)
		if err != nil {
			c.Detail = fmt.Sprintf("%s is not on PATH", prog)
			return c
		}
		bin = found
	}
	fi, err := os.Stat(bin)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Detail = fmt.Sprintf("%s does not exist", bin)
		return c
	case err != nil:
		c.Detail = fmt.Sprintf("%s: %v", bin, err)
		return c
	case !fi.Mode().IsRegular():
		c.Detail = fmt.Sprintf("%s is not a regular file", bin)
		return c
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
		c.Detail = fmt.Sprintf("%s is not executable", bin)
		return c
	}
	cctx, cancel := context.WithTimeout(ctx, hookCheckTimeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, bin, "version", "--json")
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if cctx.Err() != nil {
		c.Detail = fmt.Sprintf("%s version --json did not answer within %s", bin, hookCheckTimeout)
		return c
	}
	if err != nil {
		c.Detail = fmt.Sprintf("%s version --json: %v", bin, err)
		return c
	}
	var v struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(bytes.TrimSpace(out), &v) != nil || v.Version == "" {
		c.Detail = fmt.Sprintf("%s version --json did not print awr's version", bin)
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%s answers: awr %s", bin, v.Version)
	return c
}

// commandWords splits a hook command line as a POSIX shell would split
// its first words (blanks, single and double quotes, backslash escapes
// outside single quotes) and drops leading VAR=value assignments.
func commandWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote, escaped := false, rune(0), false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = runtime.GOOS != "windows"
				if !escaped {
					cur.WriteRune(r)
				}
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\' && runtime.GOOS != "windows":
			escaped, in = true, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	return words
}

func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// shellWord quotes s for the shell a host runs its hook commands with:
// as is when it holds only safe characters, else in single quotes (double
// quotes on Windows).
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:@%+=,", r) ||
			runtime.GOOS == "windows" && r == '\\') {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	if runtime.GOOS == "windows" {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
