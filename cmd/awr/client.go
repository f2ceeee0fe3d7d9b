package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/project"
)

type clientCmd struct {
	Bind clientBindCmd `cmd:"" help:"Tie a host conversation to a session so its checkpoints survive compaction."`
	Show clientShowCmd `cmd:"" help:"Show what a host conversation is bound to."`
	Hook clientHookCmd `cmd:"" help:"Answer one hook event of a host (JSON on stdin); the host runs it, never fails because of it."`
}

type clientBindCmd struct {
	project.ClientBindRequest
}

// Run binds a host conversation.
func (c *clientBindCmd) Run(app *App) error {
	return call(app, (*project.Project).ClientBind, c.ClientBindRequest, func(w io.Writer, res *project.BindResult) {
		b := res.Binding
		fmt.Fprintf(w, "%s bound to session %s on %s\nnext action: %s\n", safe(b.ExternalSession), b.SessionID, b.Work, safe(b.NextAction))
		for _, l := range b.OpenLoops {
			fmt.Fprintf(w, "open loop %s: %s\n", l.ID, safe(l.Text))
		}
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
		for _, l := range v.Summary.OpenLoops {
			fmt.Fprintf(w, "open loop %s: %s\n", l.ID, safe(l.Text))
		}
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
// whatever happens (problems go to .awr/hooks.log).
func (c *clientHookCmd) Run(app *App) error {
	opts := app.options()
	opts.Progress = nil // nothing on the terminal: the host reads stdout
	res := project.AnswerHook(app.Ctx, app.Project, c.HookRequest, app.Stdin, opts)
	app.Stdout.Write(res.Stdout)
	return nil
}
