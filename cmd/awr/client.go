package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/internal/project"
)

type clientCmd struct {
	Bind clientBindCmd `cmd:"" help:"Tie a host conversation to a session so its checkpoints survive compaction."`
	Show clientShowCmd `cmd:"" help:"Show what a host conversation is bound to."`
	Hook clientHookCmd `cmd:"" help:"Answer one hook event of a host (JSON on stdin); the host runs it, never fails because of it."`

	Install   clientInstallCmd   `cmd:"" help:"Preview, then (with --accept) merge awr's hooks into a host's settings file."`
	Uninstall clientUninstallCmd `cmd:"" help:"Preview, then (with --accept) remove awr's hooks from a host's settings file."`
}

type clientBindCmd struct {
	project.ClientBindRequest
}

// Run binds a host conversation.
func (c *clientBindCmd) Run(app *App) error {
	return call(app, (*project.Project).ClientBind, c.ClientBindRequest, func(w io.Writer, res *project.BindResult) {
		b := res.Binding
		fmt.Fprintf(w, "%s bound to session %s on %s\nnext action: %s\n", safe(b.ExternalSession), b.SessionID, b.Work, safe(b.NextAction))
		printOpenLoops(w, &b)
	})
}

type clientShowCmd struct {
	project.ClientShowRequest
}

// Run shows a binding.
func (c *clientShowCmd) Run(app *App) error {
	return call(app, (*project.Project).ClientShow, c.ClientShowRequest, func(w io.Writer, v *project.ClientView) {
		fmt.Fprintf(w, "%s (%s) is bound to session %s on %s since %s\n", v.Binding.ExternalSession, v.Binding.Client, v.Binding.SessionID, v.Binding.Work, ms(v.Binding.BoundAt))
		fmt.Fprintf(w, "next action: %s\n", safe(v.Summary.NextAction))
		printOpenLoops(w, v.Summary)
		if s := v.Successor; s != nil {
			if s.MayFollow {
				fmt.Fprintf(w, "resumed by %s (%s) for this conversation: awr client bind --client %s --external-session %s --work %s\n", s.SessionID, safe(s.Agent), safe(v.Binding.Client), safe(c.ExternalSession), v.Binding.Work)
			} else {
				whom := "another conversation"
				if s.ResumedFor == "" {
					whom = "no conversation"
				}
				fmt.Fprintf(w, "stale: session %s was resumed by %s (%s) for %s; see awr recovery inspect --session %s\n", v.Binding.SessionID, s.SessionID, safe(s.Agent), whom, s.SessionID)
			}
		}
	})
}

type clientHookCmd struct {
	project.HookRequest
}

// Run answers a hook event: the host's own format on stdout, exit 0
// whatever happens. An event it could not answer (a payload of a shape
// it does not know, a refusal, an error) gets one warning line on stderr,
// the same line .awr/hooks.log keeps, for the host to show or log.
func (c *clientHookCmd) Run(app *App) error {
	opts := app.options()
	opts.Progress = nil // nothing on the terminal: the host reads stdout
	res := project.AnswerHook(app.Ctx, app.Project, c.HookRequest, app.Stdin, opts)
	app.Stdout.Write(res.Stdout)
	for _, l := range res.Log {
		fmt.Fprintf(app.Stderr, "awr: warning: hook not answered: %s\n", l)
	}
	return nil
}

type clientInstallCmd struct {
	project.ClientInstallRequest
}

// Run previews or writes awr's hooks into a host's settings file.
func (c *clientInstallCmd) Run(app *App) error {
	return call(app, (*project.Project).ClientInstall, c.ClientInstallRequest, hostText)
}

type clientUninstallCmd struct {
	project.ClientUninstallRequest
}

// Run previews or removes awr's hooks from a host's settings file.
func (c *clientUninstallCmd) Run(app *App) error {
	return call(app, (*project.Project).ClientUninstall, c.ClientUninstallRequest, hostText)
}

// hostText renders an install or uninstall: the file, what changes, the
// checks, the host's notes and the next command.
func hostText(w io.Writer, r *project.HostInstallResult) {
	events := strings.Join(r.Events, ", ")
	if events == "" {
		events = "none"
	}
	switch {
	case r.Status == project.HostPreview && r.Removed:
		fmt.Fprintf(w, "preview: nothing was written. %s (%s scope) was created by awr's install and would be removed\n\n", r.Path, r.Scope)
		fmt.Fprintf(w, "awr's hooks removed from: %s\n", events)
	case r.Status == project.HostPreview:
		fmt.Fprintf(w, "preview: nothing was written. %s (%s scope) would become:\n\n", r.Path, r.Scope)
		fmt.Fprint(w, r.Content)
		if !strings.HasSuffix(r.Content, "\n") {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
		if r.Command != "" {
			fmt.Fprintf(w, "awr's hooks: %s\ncommand: %s\n", events, r.Command)
		} else {
			fmt.Fprintf(w, "awr's hooks removed from: %s\n", events)
		}
	case r.Status == project.HostInstalled:
		fmt.Fprintf(w, "installed awr's hooks for %s into %s: %s\ncommand: %s\n", r.Client, r.Path, events, r.Command)
	case r.Status == project.HostUninstalled && r.Removed:
		fmt.Fprintf(w, "removed awr's hooks for %s: %s; %s, which awr's install created, is removed\n", r.Client, events, r.Path)
	case r.Status == project.HostUninstalled:
		fmt.Fprintf(w, "removed awr's hooks for %s from %s: %s\n", r.Client, r.Path, events)
	default:
		what := "already holds awr's hooks"
		if r.Command == "" {
			what = "holds no awr hook"
		}
		fmt.Fprintf(w, "unchanged: %s %s; nothing to write\n", r.Path, what)
	}
	for _, c := range r.Checks {
		state := "ok"
		if !c.OK {
			state = "FAILED"
		}
		fmt.Fprintf(w, "check %s: %s: %s\n", c.Name, state, safe(c.Detail))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if r.Next != "" {
		fmt.Fprintf(w, "to accept: %s\n", r.Next)
	}
}

// printOpenLoops prints a binding's page of open loops, and the command
// of the next page when more follow.
func printOpenLoops(w io.Writer, b *project.BindingView) {
	for _, l := range b.OpenLoops {
		fmt.Fprintf(w, "open loop %s: %s\n", l.ID, safe(l.Text))
	}
	if b.OpenLoopsNextCommand != "" {
		fmt.Fprintf(w, "%d open loops in all; the next page: %s\n", b.OpenLoopsTotal, b.OpenLoopsNextCommand)
	}
}
