package project

import (
	"context"
	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/internal/hosts"
)

// ClientInstallRequest is `awr client install`: it previews, and with
// Accept writes, awr's hooks into a host's settings file.
type ClientInstallRequest struct {
	Client      string `name:"client" required:"" enum:"claude,codex,gemini,opencode" json:"client" help:"The host: claude, codex, gemini or opencode." placeholder:"HOST"`
	Scope       string `name:"scope" default:"project" enum:"project,user" json:"scope,omitempty" help:"Install for this project (default) or for every project of the user." placeholder:"SCOPE"`
	Accept      bool   `name:"accept" json:"accept,omitempty" help:"Write the file the preview shows."`
	Fingerprint string `name:"fingerprint" json:"fingerprint,omitempty" help:"The fingerprint the preview printed: --accept refuses with SourceStale if the file changed since." placeholder:"FP"`
	Command     string `name:"command" json:"command,omitempty" help:"The hook command line to write (default: this awr binary's absolute path, then client hook --client HOST)." placeholder:"CMDLINE"`
	Force       bool   `name:"force" json:"force,omitempty" help:"Accept even when the hook command's awr binary does not answer."`
}

// ClientUninstallRequest is `awr client uninstall`: it previews, and with
// Accept writes, a host's settings file without awr's hooks.
type ClientUninstallRequest struct {
	Client      string `name:"client" required:"" enum:"claude,codex,gemini,opencode" json:"client" help:"The host: claude, codex, gemini or opencode." placeholder:"HOST"`
	Scope       string `name:"scope" default:"project" enum:"project,user" json:"scope,omitempty" help:"Uninstall from this project's settings (default) or from the user's." placeholder:"SCOPE"`
	Accept      bool   `name:"accept" json:"accept,omitempty" help:"Write the file the preview shows."`
	Fingerprint string `name:"fingerprint" json:"fingerprint,omitempty" help:"The fingerprint the preview printed: --accept refuses with SourceStale if the file changed since." placeholder:"FP"`
}

// The statuses of a host install or uninstall.
const (
	HostPreview     = hosts.StatusPreview
	HostInstalled   = hosts.StatusInstalled
	HostUninstalled = hosts.StatusUninstalled
	HostUnchanged   = hosts.StatusUnchanged
)

// HostCheck is one check of an installed hook, in the manner of a doctor.
type HostCheck = hosts.Check

// HostInstallResult is the answer of `awr client install` and `awr client
// uninstall`.
type HostInstallResult = hosts.InstallResult

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
	return hosts.InstallClient(ctx, hosts.Client{Client: req.Client, Scope: req.Scope, Accept: req.Accept, Fingerprint: req.Fingerprint, Force: req.Force,
		Command: req.Command, Dir: p.dir, Bin: p.opts.Rig.AwrBin, Check: exec.CheckHookCommand})
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
	return hosts.UninstallClient(hosts.Client{Client: req.Client, Scope: req.Scope, Accept: req.Accept, Fingerprint: req.Fingerprint, Dir: p.dir})
}
