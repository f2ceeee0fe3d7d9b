package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/service"
	"github.com/awr-dev/awr/workcontext"
)

// project opens the project as the service layer sees it.
func (a *App) project() (*service.Project, error) {
	st, err := a.Store()
	if err != nil {
		return nil, err
	}
	dir, err := a.projectDir()
	if err != nil {
		return nil, err
	}
	env, err := a.Env()
	if err != nil {
		return nil, err
	}
	return &service.Project{Dir: dir, Store: st, Env: env}, nil
}

// projectAt opens the project and resolves a read's --at flag.
func (a *App) projectAt(f atFlag) (*service.Project, int64, error) {
	at, err := f.rev()
	if err != nil {
		return nil, 0, err
	}
	p, err := a.project()
	return p, at, err
}

// writeFlags are the concurrency and retry flags of every write.
type writeFlags struct {
	ExpectedRevision *int64 `name:"expected-revision" aliases:"expected-project-revision" help:"Fail with RevisionConflict if what this write depends on changed after revision R." placeholder:"R"`
	RequestID        string `name:"request-id" help:"Make a retried write idempotent: the same id returns the first answer." placeholder:"ID"`
}

func (w writeFlags) meta() commands.WriteMeta {
	return commands.WriteMeta{ExpectedRevision: w.ExpectedRevision, RequestID: w.RequestID}
}

func ms(t int64) string {
	if t == 0 {
		return "-"
	}
	return time.UnixMilli(t).UTC().Format(time.RFC3339)
}

type sessionCmd struct {
	Start      sessionStartCmd      `cmd:"" help:"Start a session on a work item, optionally claiming it."`
	Checkpoint sessionCheckpointCmd `cmd:"" help:"Record what was done, the next action and the open loops."`
	End        sessionEndCmd        `cmd:"" help:"End a session and release its claim."`
	Resume     sessionResumeCmd     `cmd:"" help:"Continue a session in a new one that inherits its checkpoint and claim."`
	Show       sessionShowCmd       `cmd:"" help:"Show a session with its claim, checkpoints and bindings."`
	List       sessionListCmd       `cmd:"" help:"List sessions."`
}

type sessionStartCmd struct {
	Work     string `required:"" help:"Work item key." placeholder:"KEY"`
	Agent    string `required:"" help:"Who works (a label)." placeholder:"LABEL"`
	Provider string `help:"The agent's provider (a label)." placeholder:"NAME"`
	Model    string `help:"The model (a label; awr never calls a model)." placeholder:"LABEL"`
	Claim    bool   `help:"Reserve the work item for this session."`
	TTLms    int64  `name:"ttl-ms" help:"Lease length of the claim in milliseconds (0: no expiry)." placeholder:"N"`
	writeFlags
}

// Run starts a session.
func (c *sessionStartCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.StartSession(app.Ctx, commands.StartRequest{Work: c.Work, Agent: c.Agent, Provider: c.Provider, Model: c.Model, Claim: c.Claim, TTLms: c.TTLms, WriteMeta: c.meta()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "session %s started on %s by %s (project_revision %d)\n", res.Session.ID, res.Session.Work, res.Session.Agent, res.ProjectRevision)
		if res.Claim != nil {
			fmt.Fprintf(w, "claim %s, fencing token %d, expires %s\n", res.Claim.ID, res.Claim.FencingToken, ms(res.Claim.ExpiresAt))
		}
		fmt.Fprintf(w, "next: awr context compile --work %s --session %s\n", res.Session.Work, res.Session.ID)
	})
}

type sessionCheckpointCmd struct {
	Session     string   `required:"" help:"Session id." placeholder:"ID"`
	Agent       string   `required:"" help:"Who records it." placeholder:"LABEL"`
	ContextHash string   `name:"context-hash" help:"Hash of the context packet the work was based on." placeholder:"H"`
	Digest      string   `required:"" help:"What was actually done (never a claim that tests passed unless they ran)." placeholder:"TEXT"`
	NextAction  string   `name:"next-action" required:"" help:"The exact next action." placeholder:"TEXT"`
	OpenLoop    []string `name:"open-loop" sep:"none" help:"An open loop (repeatable)." placeholder:"TEXT"`
	writeFlags
}

// Run records a checkpoint.
func (c *sessionCheckpointCmd) Run(app *App) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	res, err := commands.RecordCheckpoint(app.Ctx, env, commands.CheckpointRequest{SessionID: c.Session, Agent: c.Agent, ContextHash: c.ContextHash,
		Digest: c.Digest, NextAction: c.NextAction, OpenLoops: c.OpenLoop, WriteMeta: c.meta()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		cp := res.Checkpoint
		fmt.Fprintf(w, "checkpoint %s at seq %d (context hash verified: %v)\nnext action: %s\n", cp.ID, cp.Seq, cp.ContextHashVerified, cp.NextAction)
		for _, l := range cp.OpenLoops {
			fmt.Fprintf(w, "open loop: %s\n", l)
		}
	})
}

type sessionEndCmd struct {
	Session string `required:"" help:"Session id." placeholder:"ID"`
	Outcome string `required:"" enum:"completed,incomplete,interrupted,abandoned" help:"completed, incomplete, interrupted or abandoned (the work item's status in its source is never changed)."`
	Agent   string `help:"Who ends it." placeholder:"LABEL"`
	writeFlags
}

// Run ends a session.
func (c *sessionEndCmd) Run(app *App) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	res, err := commands.EndSession(app.Ctx, env, commands.EndRequest{SessionID: c.Session, Outcome: c.Outcome, Agent: c.Agent, WriteMeta: c.meta()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "session %s ended: %s (project_revision %d)\n", res.Session.ID, res.Session.Outcome, res.ProjectRevision)
		if res.ReleasedClaim != nil {
			fmt.Fprintf(w, "released claim on %s\n", res.ReleasedClaim.Work)
		}
		fmt.Fprintf(w, "the work item's status stays as its source says; update %s there when it is done\n", res.Session.Work)
	})
}

type sessionResumeCmd struct {
	FromSession string `name:"from-session" required:"" help:"The session to continue." placeholder:"ID"`
	Agent       string `required:"" help:"Who continues." placeholder:"LABEL"`
	Provider    string `help:"The successor's provider (a label)." placeholder:"NAME"`
	Model       string `help:"The successor's model (a label)." placeholder:"LABEL"`
	Budget      int    `help:"Token budget of the context packet." default:"5000" placeholder:"N"`
	Claim       *bool  `negatable:"" help:"--claim also takes a free claim; --no-claim resumes without one (default: move a live claim)."`
	TTLms       int64  `name:"ttl-ms" help:"Lease of a new or moved claim in milliseconds." placeholder:"N"`
	writeFlags
}

// Run resumes a session.
func (c *sessionResumeCmd) Run(app *App) error {
	shortLived()
	go workcontext.Warm()
	p, err := app.project()
	if err != nil {
		return err
	}
	res, err := p.Resume(app.Ctx, commands.ResumeRequest{FromSession: c.FromSession, Agent: c.Agent, Provider: c.Provider, Model: c.Model,
		Claim: c.Claim, TTLms: c.TTLms, WriteMeta: c.meta()}, c.Budget)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		s := res.Resumed.Session
		fmt.Fprintf(w, "session %s resumes %s on %s (project_revision %d)\n", s.ID, res.Resumed.FromSession, s.Work, res.ProjectRevision)
		if res.Resumed.Claim != nil {
			fmt.Fprintf(w, "claim: fencing token %d, expires %s\n", res.Resumed.Claim.FencingToken, ms(res.Resumed.Claim.ExpiresAt))
		}
		if cp := res.Checkpoint; cp != nil {
			fmt.Fprintf(w, "inherited checkpoint %s: %s\nnext action: %s\n", cp.ID, cp.Digest, cp.NextAction)
			for _, l := range cp.OpenLoops {
				fmt.Fprintf(w, "open loop: %s\n", l)
			}
		}
		fmt.Fprintf(w, "context ready: %v", res.ContextReady)
		if res.Context != nil {
			fmt.Fprintf(w, " (%d of %d tokens, %s)", res.Context.TokenEstimate, res.Context.TokenBudget, res.Context.ContextHash)
		}
		fmt.Fprintln(w)
		for _, g := range res.RecoveryGaps {
			fmt.Fprintf(w, "gap: %s\n", g)
		}
		fmt.Fprintf(w, "next: awr context compile --work %s --session %s\n", s.Work, s.ID)
	})
}

type sessionShowCmd struct {
	ID string `arg:"" help:"Session id."`
	atFlag
}

// Run shows a session.
func (c *sessionShowCmd) Run(app *App) error {
	p, at, err := app.projectAt(c.atFlag)
	if err != nil {
		return err
	}
	v, err := p.ShowSession(app.Ctx, c.ID, at)
	if err != nil {
		return err
	}
	return app.render(v, func(w io.Writer) {
		s := v.Session
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		agent := s.Agent
		if pm := strings.TrimSpace(s.Provider + " " + s.Model); pm != "" {
			agent += " (" + pm + ")"
		}
		fmt.Fprintf(tw, "session\t%s\nwork\t%s\nagent\t%s\nstatus\t%s\nstarted\t%s (seq %d)\n", s.ID, s.Work, agent, strings.TrimSpace(s.Status+" "+s.Outcome), ms(s.StartedAt), s.StartRevision)
		if s.PredecessorID != "" {
			fmt.Fprintf(tw, "predecessor\t%s\n", s.PredecessorID)
		}
		if s.SuccessorID != "" {
			fmt.Fprintf(tw, "successor\t%s\n", s.SuccessorID)
		}
		for _, cl := range v.Claims {
			fmt.Fprintf(tw, "claim\t%s token %d, %s, expires %s\n", cl.ID, cl.FencingToken, cl.StateAt(app.Now().UnixMilli()), ms(cl.ExpiresAt))
		}
		for _, cp := range v.Checkpoints {
			fmt.Fprintf(tw, "checkpoint\tseq %d: %s | next: %s | loops: %s\n", cp.Seq, cp.Digest, cp.NextAction, strings.Join(cp.OpenLoops, "; "))
		}
		for _, b := range v.Bindings {
			fmt.Fprintf(tw, "bound\t%s (%s)\n", b.ExternalSession, b.Client)
		}
		tw.Flush()
	})
}

type sessionListCmd struct {
	Active bool   `help:"Only active sessions."`
	Work   string `help:"Only sessions on this work item." placeholder:"KEY"`
	atFlag
}

// Run lists sessions.
func (c *sessionListCmd) Run(app *App) error {
	p, at, err := app.projectAt(c.atFlag)
	if err != nil {
		return err
	}
	out, err := p.ListSessions(app.Ctx, service.ListOptions{Active: c.Active, Work: c.Work, At: at})
	if err != nil {
		return err
	}
	return app.render(out, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SESSION\tWORK\tAGENT\tSTATUS\tSTARTED\tLAST CHECKPOINT")
		for _, s := range out.Sessions {
			st := s.Status
			if s.Outcome != "" {
				st += " (" + s.Outcome + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", s.ID, s.Work, s.Agent, st, ms(s.StartedAt), s.LastCheckpointSeq)
		}
		tw.Flush()
	})
}
