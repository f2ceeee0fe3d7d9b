package hosts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
)

// The statuses of a host install or uninstall.
const (
	StatusPreview     = "preview"     // nothing was written; Next accepts the change
	StatusInstalled   = "installed"   // the file was written with awr's hooks
	StatusUninstalled = "uninstalled" // the file was written without awr's hooks
	StatusUnchanged   = "unchanged"   // the file already is what was asked; nothing written
)

// Check is one check of an installed hook, in the manner of a doctor.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// InstallResult is the answer of `awr client install` and `awr client
// uninstall`.
type InstallResult struct {
	Client string `json:"client"`
	Scope  string `json:"scope"`
	// Path is the host's settings file.
	Path   string `json:"path"`
	Status string `json:"status"`
	// Changed says whether the resulting file differs from the file as
	// read: with Accept, whether it was written.
	Changed bool `json:"changed"`
	// Fingerprint identifies the file as read (Absent when it did
	// not exist); pass it back with --fingerprint.
	Fingerprint string `json:"fingerprint"`
	// Content is the resulting file's text ("" when it is removed).
	Content string `json:"content"`
	// Removed says that uninstall removes (with Accept, removed) the
	// file: install created it.
	Removed bool `json:"removed,omitempty"`
	// Events are the host events awr hooks (install) or whose awr hooks
	// are removed (uninstall).
	Events []string `json:"events"`
	// Command is the hook command line written (install only).
	Command string  `json:"command,omitempty"`
	Checks  []Check `json:"checks"`
	// Notes are the host's facts that matter after this change.
	Notes []string `json:"notes"`
	// Next is, for a preview, the complete command that accepts it.
	Next string `json:"next"`
}

// Change is one install or uninstall of awr's hooks in host Host's
// settings file Path at Scope, as the door asks for it.
type Change struct {
	Host  Host
	Scope Scope
	Path  string
	// Command is the hook command line to write (install only).
	Command string
	// Dir is the project directory: a relative hook program is looked up
	// under it.
	Dir string
	// Accept writes the change; without it, the result is a preview.
	Accept bool
	// Fingerprint, when set, is the file as the preview read it.
	Fingerprint string
	// Force installs even when the hook command does not answer.
	Force bool
	// Check is the check of the hook's command line
	// (exec.CheckHookCommand, which the door passes: it runs the awr
	// binary the line names, `version --json`; this package starts no
	// process). Nil is a check that was not made, which an
	// install without Force refuses.
	Check func(ctx context.Context, command, dir string) Check
	// Keep is the directory where install records the file as it was, so
	// that uninstall gives it back byte for byte ("": nothing is kept,
	// and uninstall works on the JSON's structure only).
	Keep string
	// Preview is the complete command that previews this change again:
	// the hint of its errors, and with " --accept --fingerprint FP" the
	// next command of a preview.
	Preview string
}

// ApplyInstall previews, and with c.Accept writes, awr's hooks merged into
// the settings file c.Path: every other key and hook is kept, a second
// install changes nothing, and the write is atomic. The result's checks
// say whether the awr binary on the hook's command line exists and
// answers.
//
// Errors: InvalidInput for a settings file that is not valid JSON (naming
// path:line:column) or not shaped like a hooks file, or, with Accept and
// without Force, a hook command whose binary does not answer; SourceStale
// when Fingerprint is given and the file changed since; Storage. Nothing
// is written on any error.
func ApplyInstall(ctx context.Context, c Change) (*InstallResult, error) {
	const op = "client install"
	existing, fp, err := c.readSeen()
	if err != nil {
		return nil, err
	}
	out, err := Install(c.Host, existing, c.Command)
	if err != nil {
		return nil, settingsError(op, c.Path, c.Preview, err)
	}
	res := &InstallResult{Client: string(c.Host), Scope: string(c.Scope), Path: c.Path, Fingerprint: fp,
		Content: string(out), Events: Installed(c.Host), Command: c.Command, Notes: Notes(c.Host, c.Scope),
		Changed: fp == Absent || !bytes.Equal(out, existing)}
	check := Check{Name: "hook_command", Detail: "the hook's command line was not checked"}
	if c.Check != nil {
		check = c.Check(ctx, c.Command, c.Dir)
	}
	res.Checks = []Check{check}
	if c.answered(res, fp) {
		return res, nil
	}
	if ck := res.Checks[0]; !ck.OK && !c.Force {
		return nil, fault.New(fault.InvalidInput, "%s: the hook command does not answer: %s; install awr there or pass --command with a working awr, then preview again, or add --force to install anyway", op, ck.Detail).
			With("path", c.Path).With("command", c.Command).
			WithHint("%s", c.Preview)
	}
	if err := writeSettings(c.Path, fp, out, c.Preview); err != nil {
		return nil, err
	}
	if err := keep(c, existing, fp, out); err != nil {
		return nil, err
	}
	res.Status = StatusInstalled
	return res, nil
}

// answered says whether res is the whole answer, with nothing to write:
// the file would not change (unchanged), or c does not accept (a preview,
// whose Next accepts it at fingerprint fp).
func (c Change) answered(res *InstallResult, fp string) bool {
	switch {
	case !res.Changed:
		res.Status = StatusUnchanged
		return true
	case !c.Accept:
		res.Status, res.Next = StatusPreview, c.Preview+" --accept --fingerprint "+fp
		return true
	}
	return false
}

// readSeen reads the settings file c.Path and its fingerprint, refused
// (SourceStale) when c.Fingerprint is given and the file changed since.
func (c Change) readSeen() ([]byte, string, error) {
	existing, fp, err := ReadSettings(c.Path)
	if err != nil {
		return nil, "", err
	}
	if err := checkSeen(c.Path, fp, c.Fingerprint, c.Preview); err != nil {
		return nil, "", err
	}
	return existing, fp, nil
}

// ApplyUninstall previews, and with c.Accept writes, the settings file
// c.Path without awr's hook handlers. A file still exactly as install
// wrote it is given back as it was before, byte for byte, and a file
// install created is removed (see Change.Keep); any other keeps every
// other key and hook. A file without awr's hooks (or no file) is
// unchanged.
//
// Errors: InvalidInput for a settings file that is not valid JSON (naming
// path:line:column) or not shaped like a hooks file; SourceStale when
// Fingerprint is given and the file changed since; Storage. Nothing is
// written on any error.
func ApplyUninstall(c Change) (*InstallResult, error) {
	const op = "client uninstall"
	existing, fp, err := c.readSeen()
	if err != nil {
		return nil, err
	}
	out, err := Uninstall(c.Host, existing)
	if err != nil {
		return nil, settingsError(op, c.Path, c.Preview, err)
	}
	res := &InstallResult{Client: string(c.Host), Scope: string(c.Scope), Path: c.Path, Fingerprint: fp,
		Content: string(out), Events: AwrEvents(c.Host, existing), Checks: []Check{}, Notes: []string{},
		Changed: fp != Absent && !bytes.Equal(out, existing)}
	if c.Host == OpenCode && fp != Absent && out == nil {
		// awr's plugin file: nothing of it stays.
		res.Removed = true
	}
	if k := readKept(c); k != nil && fp != Absent && k.Written == digest(existing) {
		// The file is as awr's install wrote it: the file as it was
		// before, byte for byte, or none.
		out, res.Changed = k.Original, true
		res.Content, res.Removed = string(out), k.Absent
	}
	if c.answered(res, fp) {
		return res, nil
	}
	if res.Removed {
		if err := removeSettings(c.Path, fp, c.Preview); err != nil {
			return nil, err
		}
	} else if err := writeSettings(c.Path, fp, out, c.Preview); err != nil {
		return nil, err
	}
	if err := forget(c); err != nil {
		return nil, err
	}
	res.Status = StatusUninstalled
	return res, nil
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
	if err := Unchanged(path, fp); err != nil {
		if fe := fault.As(err); fe.Code == fault.SourceStale {
			fe.WithHint("%s", preview)
		}
		return err
	}
	return WriteAtomic(path, data)
}

// removeSettings removes the settings file, after checking once more that
// it is still the file that was read.
func removeSettings(path, fp, preview string) error {
	if err := Unchanged(path, fp); err != nil {
		if fe := fault.As(err); fe.Code == fault.SourceStale {
			fe.WithHint("%s", preview)
		}
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fault.Wrap(fault.Storage, err, "remove settings").With("path", path)
	}
	return nil
}

// settingsError names the file, and for invalid JSON the line and column,
// in an error of Install or Uninstall.
func settingsError(op, path, preview string, err error) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		return fault.Wrap(fault.InvalidInput, syntaxCause{se}, "%s: %s:%d:%d: not valid JSON", op, path, se.Line, se.Column).
			With("path", path).With("line", se.Line).With("column", se.Column).
			WithHint("%s", preview)
	}
	if errors.Is(err, ErrSettingsShape) || errors.Is(err, ErrSettingsSyntax) {
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
type syntaxCause struct{ se *SyntaxError }

func (e syntaxCause) Error() string { return e.se.Msg }
func (e syntaxCause) Unwrap() error { return e.se }

// Notes are the facts of host h that matter after awr's hooks were
// written into its settings file at scope sc.
func Notes(h Host, sc Scope) []string {
	switch h {
	case Codex:
		return []string{
			"codex runs a new or changed hook only once it is trusted: open /hooks in codex and review it",
			"codex runs a hook installed at both scopes twice; awr records the event once",
		}
	case OpenCode:
		return []string{
			"opencode loads the plugin when it starts: restart a running opencode",
			"the plugin runs only the hook command above, without a shell; awr client uninstall --client opencode removes it",
		}
	case Gemini:
		notes := []string{"gemini hook timeouts are in milliseconds; /hooks in gemini lists the hooks it loaded"}
		if sc == Project {
			notes = append(notes, "gemini warns before it runs a new or changed project hook")
		}
		return notes
	default:
		notes := []string{"claude code reloads its settings by itself; /hooks lists the hooks it runs"}
		if sc == Project {
			notes = append(notes, ".claude/settings.json is shared with the team: every teammate needs awr on PATH, or use --scope user")
		}
		return notes
	}
}

// AwrEvents returns the events of a settings file that hold an awr hook
// handler: the ones awr installs first, in their order, then the others
// sorted.
func AwrEvents(h Host, data []byte) []string {
	if h == OpenCode {
		if IsPlugin(data) {
			return Installed(h)
		}
		return []string{}
	}
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
					if IsAwrCommand(hd.Command, hd.Args) {
						found[ev] = true
					}
				}
			}
		}
	}
	out := []string{}
	for _, ev := range Installed(h) {
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

// InstalledFile reports whether path (slash-separated, as git names a
// changed file: relative to the work tree's root, which holds the
// project directory dir or is it) is one of install's records (under
// KeptDir) or a host's project settings file of dir that holds awr's
// hooks: `awr client install` wrote it, and a change
// of it is no change of the work. The file is read (bounded by
// MaxSettings) only when path ends with a host's project settings path.
func InstalledFile(dir, path string) bool {
	if path == KeptDir || strings.HasPrefix(path, KeptDir+"/") || strings.Contains(path, "/"+KeptDir+"/") {
		return true // install's records of the files as they were
	}
	for _, h := range Hosts() {
		p, err := SettingsPath(h, Project, dir, "", nil)
		if err != nil {
			continue
		}
		rel, err := filepath.Rel(dir, p)
		if rel = filepath.ToSlash(rel); err != nil || path != rel && !strings.HasSuffix(path, "/"+rel) {
			continue
		}
		data, _, err := ReadSettings(p)
		if err != nil || len(data) == 0 {
			return false
		}
		out, err := Uninstall(h, data)
		return err == nil && !bytes.Equal(out, data)
	}
	return false
}
