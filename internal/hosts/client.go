package hosts

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/awr-dev/awr/internal/shellwords"
)

// Client is one `awr client install` or `awr client uninstall` of the
// project in Dir, as the door received it.
type Client struct {
	// Client and Scope name the host and the scope as a person does
	// (Target).
	Client, Scope string
	// Accept, Fingerprint and Force are those of Change.
	Accept      bool
	Fingerprint string
	Force       bool
	// Command is the hook command line to write (install only; "" is
	// HookCommand of Bin).
	Command string
	// Dir is the project directory.
	Dir string
	// Bin is the awr binary a default hook command runs ("" is this
	// executable, else awr).
	Bin string
	// Check is Change.Check (install only).
	Check func(ctx context.Context, command, dir string) Check
}

// InstallClient previews, and with Accept writes, awr's hooks merged into the
// settings file of c's host at c's scope (ApplyInstall), the preview
// naming the command that runs it again.
// Errors: those of Target and ApplyInstall.
func InstallClient(ctx context.Context, c Client) (*InstallResult, error) {
	h, sc, path, err := Target(c.Client, c.Scope, c.Dir)
	if err != nil {
		return nil, err
	}
	command := strings.TrimSpace(c.Command)
	if command == "" {
		bin := c.Bin
		if bin == "" {
			bin, _ = os.Executable()
		}
		if bin == "" {
			bin = "awr"
		}
		command = HookCommand(bin, h)
	}
	base := "awr client install --client " + string(h) + " --scope " + string(sc) + projectFlag(sc, c.Dir)
	if c.Command != "" {
		base += " --command " + shellwords.Quote(command)
	}
	return ApplyInstall(ctx, Change{Host: h, Scope: sc, Path: path, Command: command, Dir: c.Dir, Keep: filepath.Join(c.Dir, filepath.FromSlash(KeptDir)),
		Accept: c.Accept, Fingerprint: c.Fingerprint, Force: c.Force, Preview: base, Check: c.Check})
}

// UninstallClient previews, and with Accept writes, the settings file of c's
// host at c's scope without awr's hook handlers (ApplyUninstall).
// Errors: those of Target and ApplyUninstall.
func UninstallClient(c Client) (*InstallResult, error) {
	h, sc, path, err := Target(c.Client, c.Scope, c.Dir)
	if err != nil {
		return nil, err
	}
	base := "awr client uninstall --client " + string(h) + " --scope " + string(sc) + projectFlag(sc, c.Dir)
	return ApplyUninstall(Change{Host: h, Scope: sc, Path: path, Keep: filepath.Join(c.Dir, filepath.FromSlash(KeptDir)),
		Accept: c.Accept, Fingerprint: c.Fingerprint, Preview: base})
}

// projectFlag returns " --project DIR" when a project-scope command run
// from the current directory would not reach the project in dir.
func projectFlag(sc Scope, dir string) string {
	if sc != Project {
		return ""
	}
	if wd, err := os.Getwd(); err == nil {
		if abs, err := filepath.Abs(wd); err == nil && abs == dir {
			return ""
		}
	}
	return " --project " + shellwords.Quote(dir)
}
