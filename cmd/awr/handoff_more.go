package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/service"
	"github.com/awr-dev/awr/workcontext"
)

type contextCmd struct {
	Compile contextCompileCmd `cmd:"" help:"Compile the bounded context packet for a work item (prints the packet)."`
}

type contextCompileCmd struct {
	Work    string `required:"" help:"Work item key." placeholder:"KEY"`
	Session string `help:"Record the compile for this session (so checkpoints can prove their context)." placeholder:"ID"`
	Budget  int    `help:"Token budget (o200k_base)." default:"5000" placeholder:"N"`
	atFlag
}

// Run compiles a context packet. Without --json it prints the packet; an
// incomplete packet is printed, marked, and exits 1.
func (c *contextCompileCmd) Run(app *App) error {
	shortLived()
	go workcontext.Warm() // overlaps loading the tokenizer with opening the project
	p, at, err := app.projectAt(c.atFlag)
	if err != nil {
		return err
	}
	res, cerr := p.Compile(app.Ctx, service.CompileOptions{Work: c.Work, Session: c.Session, Budget: c.Budget, At: at})
	if res == nil {
		return cerr
	}
	if err := app.render(res, func(w io.Writer) { io.WriteString(w, res.WorkContext.RenderedContext) }); err != nil {
		return err
	}
	return cerr
}

type claimCmd struct {
	Renew   claimRenewCmd   `cmd:"" help:"Extend the lease of the session's claim (the holder only)."`
	Release claimReleaseCmd `cmd:"" help:"Let the session's claim go early."`
}

type claimRenewCmd struct {
	Session string `required:"" help:"Session id." placeholder:"ID"`
	TTLms   int64  `name:"ttl-ms" help:"New lease from now in milliseconds (0: no expiry)." default:"1800000" placeholder:"N"`
	writeFlags
}

// Run renews a lease.
func (c *claimRenewCmd) Run(app *App) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	res, err := commands.RenewClaim(app.Ctx, env, commands.RenewRequest{SessionID: c.Session, TTLms: c.TTLms, WriteMeta: c.meta()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "claim on %s renewed until %s (fencing token %d)\n", res.Claim.Work, ms(res.Claim.ExpiresAt), res.Claim.FencingToken)
	})
}

type claimReleaseCmd struct {
	Session string `required:"" help:"Session id." placeholder:"ID"`
	writeFlags
}

// Run releases a claim.
func (c *claimReleaseCmd) Run(app *App) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	res, err := commands.ReleaseClaim(app.Ctx, env, commands.ReleaseRequest{SessionID: c.Session, WriteMeta: c.meta()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) { fmt.Fprintf(w, "claim on %s released\n", res.Claim.Work) })
}

type recoveryCmd struct {
	Inspect recoveryInspectCmd `cmd:"" help:"Where a session stands and the exact command to run next (read-only)."`
}

type recoveryInspectCmd struct {
	Session string `required:"" help:"Session id." placeholder:"ID"`
	atFlag
}

// Run reports recovery state.
func (c *recoveryInspectCmd) Run(app *App) error {
	p, at, err := app.projectAt(c.atFlag)
	if err != nil {
		return err
	}
	rep, err := p.Recovery(app.Ctx, c.Session, at)
	if err != nil {
		return err
	}
	return app.render(rep, func(w io.Writer) {
		s := rep.Session
		fmt.Fprintf(w, "session %s on %s: %s (project_revision %d)\n", s.ID, s.Work, strings.TrimSpace(s.Status+" "+s.Outcome), rep.ProjectRevision)
		if rep.Claim != nil {
			fmt.Fprintf(w, "claim: %s, fencing token %d, expires %s\n", rep.Claim.StateNow, rep.Claim.FencingToken, ms(rep.Claim.ExpiresAt))
		} else {
			fmt.Fprintln(w, "claim: none")
		}
		if cp := rep.Checkpoint; cp != nil {
			from := ""
			if rep.Inherited {
				from = " (inherited from " + cp.SessionID + ")"
			}
			fmt.Fprintf(w, "last checkpoint %s%s: %s\nnext action: %s\n", cp.ID, from, cp.Digest, cp.NextAction)
			for _, l := range cp.OpenLoops {
				fmt.Fprintf(w, "open loop: %s\n", l)
			}
		} else {
			fmt.Fprintln(w, "no checkpoint recorded")
		}
		for _, b := range rep.Bindings {
			fmt.Fprintf(w, "bound: %s (%s)\n", b.ExternalSession, b.Client)
		}
		if rep.PredecessorID != "" {
			fmt.Fprintf(w, "predecessor: %s\n", rep.PredecessorID)
		}
		if rep.SuccessorID != "" {
			fmt.Fprintf(w, "successor: %s\n", rep.SuccessorID)
		}
		if n := len(rep.ChangedSince); n > 0 {
			var kinds []string
			for _, e := range rep.ChangedSince {
				kinds = append(kinds, fmt.Sprintf("%d %s", e.Seq, e.Kind))
			}
			fmt.Fprintf(w, "changed on %s since the checkpoint: %s\n", s.Work, strings.Join(kinds, ", "))
		}
		fmt.Fprintf(w, "next: %s\n", rep.NextStep)
	})
}

type clientCmd struct {
	Bind clientBindCmd `cmd:"" help:"Tie a host conversation to a session so its checkpoints survive compaction."`
	Show clientShowCmd `cmd:"" help:"Show what a host conversation is bound to."`
}

type clientBindCmd struct {
	Client          string `required:"" help:"The host (e.g. claude-code)." placeholder:"NAME"`
	ExternalSession string `name:"external-session" required:"" help:"The host's conversation id, as HOST:ID." placeholder:"HOST:ID"`
	Work            string `required:"" help:"Work item key." placeholder:"KEY"`
	Session         string `help:"Bind to this session." placeholder:"ID"`
	FromSession     string `name:"from-session" help:"Bind to the latest successor of this session." placeholder:"ID"`
	writeFlags
}

// Run binds a host conversation.
func (c *clientBindCmd) Run(app *App) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	res, err := commands.BindClient(app.Ctx, env, commands.BindRequest{Client: c.Client, ExternalSession: c.ExternalSession, Work: c.Work,
		SessionID: c.Session, FromSession: c.FromSession, WriteMeta: c.meta()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		b := res.Binding
		fmt.Fprintf(w, "%s bound to session %s on %s\nnext action: %s\n", b.ExternalSession, b.SessionID, b.Work, b.NextAction)
		for _, l := range b.OpenLoops {
			fmt.Fprintf(w, "open loop: %s\n", l)
		}
	})
}

type clientShowCmd struct {
	ExternalSession string `name:"external-session" required:"" help:"The host's conversation id, as HOST:ID." placeholder:"HOST:ID"`
	atFlag
}

// Run shows a binding.
func (c *clientShowCmd) Run(app *App) error {
	p, at, err := app.projectAt(c.atFlag)
	if err != nil {
		return err
	}
	v, err := p.ShowClient(app.Ctx, c.ExternalSession, at)
	if err != nil {
		return err
	}
	return app.render(v, func(w io.Writer) {
		fmt.Fprintf(w, "%s (%s) is bound to session %s on %s since %s\n", v.Binding.ExternalSession, v.Binding.Client, v.Binding.SessionID, v.Binding.Work, ms(v.Binding.BoundAt))
	})
}

// shortLived tunes the garbage collector for a command that allocates a
// burst (the tokenizer's tables) and exits: collect only if the heap nears
// 256 MiB. GOGC or GOMEMLIMIT in the environment still win.
func shortLived() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(256 << 20)
	}
}
