package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/rig"
)

// rigManager opens the project and returns its rig manager. AWR_TMUX_SOCKET
// selects a private tmux server (tmux -L); AWR_TEST_CRASHPOINT is a crash-test
// hook (see docs/rigs.md).
func (a *App) rigManager() (*rig.Manager, error) {
	p, err := a.project()
	if err != nil {
		return nil, err
	}
	return &rig.Manager{P: p, Tmux: rig.Tmux{Socket: os.Getenv("AWR_TMUX_SOCKET")}, AwrBin: awrBinary(), Crashpoint: os.Getenv("AWR_TEST_CRASHPOINT")}, nil
}

// rigManagerAt opens the rig manager and resolves a read's --at flag.
func (a *App) rigManagerAt(f atFlag) (*rig.Manager, int64, error) {
	at, err := f.rev()
	if err != nil {
		return nil, 0, err
	}
	m, err := a.rigManager()
	return m, at, err
}

type seatCmd struct {
	Add    seatAddCmd    `cmd:"" help:"Declare a seat (ROLE@RIG): how its agent starts and resumes, its work and its restore policy."`
	Remove seatRemoveCmd `cmd:"" help:"Retire a stopped seat (its history stays in the log)."`
	Show   seatShowCmd   `cmd:"" help:"A seat and its occupants over time: sessions, conversations, outcomes."`
	List   seatListCmd   `cmd:"" help:"List seats with their state."`
}

type seatAddCmd struct {
	Address       string `arg:"" help:"Seat address ROLE@RIG, e.g. build@portal." placeholder:"ROLE@RIG"`
	Runtime       string `required:"" enum:"generic,claude,codex" help:"How the agent is launched: generic (your templates), claude or codex (shipped templates)." placeholder:"RUNTIME"`
	Command       string `help:"Start template; placeholders {seat} {rig} {role} {session} {conversation} {context_file} {project} {work}." placeholder:"TEMPLATE"`
	ResumeCommand string `name:"resume-command" help:"Resume template (resumes {conversation} by id)." placeholder:"TEMPLATE"`
	Work          string `help:"Work item the seat claims." placeholder:"KEY"`
	Cwd           string `help:"Directory the agent runs in (relative to the project)." placeholder:"DIR"`
	Policy        string `default:"resume_if_possible" enum:"resume_if_possible,relaunch_fresh,checkpoint_only" help:"Restore policy: resume_if_possible, relaunch_fresh or checkpoint_only."`
	StopMessage   string `name:"stop-message" help:"Message typed to the agent when its rig goes down (placeholders as for --command)." placeholder:"TEXT"`
	writeFlags
}

// Run declares a seat.
func (c *seatAddCmd) Run(app *App) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	res, err := commands.DeclareSeat(app.Ctx, env, commands.SeatRequest{Address: c.Address, Runtime: c.Runtime, Command: c.Command,
		ResumeCommand: c.ResumeCommand, Work: c.Work, Cwd: c.Cwd, Policy: c.Policy, StopMessage: c.StopMessage, WriteMeta: c.meta()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		verb := "declared"
		if !res.Changed {
			verb = "unchanged"
		}
		fmt.Fprintf(w, "seat %s %s (runtime %s, policy %s, work %s)\n", res.Seat.Address, verb, res.Seat.Runtime, res.Seat.Policy, orDash(res.Seat.Work))
	})
}

type seatRemoveCmd struct {
	Address string `arg:"" placeholder:"ROLE@RIG"`
	writeFlags
}

// Run retires a seat.
func (c *seatRemoveCmd) Run(app *App) error {
	env, err := app.Env()
	if err != nil {
		return err
	}
	res, err := commands.RemoveSeat(app.Ctx, env, commands.RemoveSeatRequest{Address: c.Address, WriteMeta: c.meta()})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) { fmt.Fprintf(w, "seat %s removed\n", c.Address) })
}

type seatShowCmd struct {
	Address string `arg:"" placeholder:"ROLE@RIG"`
	atFlag
}

// Run shows a seat.
func (c *seatShowCmd) Run(app *App) error {
	m, at, err := app.rigManagerAt(c.atFlag)
	if err != nil {
		return err
	}
	res, err := m.Show(app.Ctx, c.Address, at)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		s := res.Seat
		fmt.Fprintf(w, "seat %s: %s (runtime %s, policy %s, work %s)\n", s.Address, res.State, s.Runtime, s.Policy, orDash(s.Work))
		if s.LastOutcome != "" {
			fmt.Fprintf(w, "last outcome: %s: %s\n", s.LastOutcome, s.LastReason)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LAUNCHED\tMODE\tSESSION\tCONVERSATION\tENDED\tOUTCOME")
		for _, o := range res.Occupants {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", o.LaunchedSeq, o.Mode, o.SessionID, orDash(o.Conversation), orDash(o.Ended), orDash(o.Outcome))
		}
		tw.Flush()
	})
}

type seatListCmd struct {
	Rig string `help:"Only this rig's seats." placeholder:"NAME"`
	atFlag
}

// Run lists seats.
func (c *seatListCmd) Run(app *App) error {
	m, at, err := app.rigManagerAt(c.atFlag)
	if err != nil {
		return err
	}
	res, err := m.List(app.Ctx, c.Rig, at)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) { printSeats(w, res.Seats) })
}

func printSeats(w io.Writer, seats []*rig.PsSeat) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEAT\tSTATE\tPOLICY\tSESSION\tCONVERSATION\tLAST OUTCOME")
	for _, s := range seats {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Address, s.State, s.Policy, orDash(s.SessionID), orDash(s.Conversation), orDash(s.LastOutcome))
	}
	tw.Flush()
}

type rigCmd struct {
	Up    rigUpCmd    `cmd:"" help:"Launch every stopped seat, restoring from the latest snapshot: one outcome per seat."`
	Down  rigDownCmd  `cmd:"" help:"Ask each seat to checkpoint, optionally snapshot, then stop the seats."`
	Ps    rigPsCmd    `cmd:"" help:"Each seat's state, session, conversation and last outcome."`
	Apply rigApplyCmd `cmd:"" help:"Declare a rig's seats from a YAML spec (seats it no longer lists are removed)."`
}

type rigUpCmd struct {
	Name          string        `arg:"" help:"Rig name." placeholder:"NAME"`
	Fresh         []string      `help:"Relaunch this seat with a new conversation (repeatable); the decision is recorded." placeholder:"ROLE@RIG"`
	Plan          bool          `help:"Show the per-seat decisions without touching anything."`
	VerifyTimeout time.Duration `name:"verify-timeout" default:"30s" help:"How long a launched agent has to report its conversation id."`
	TTL           time.Duration `name:"ttl" default:"0s" help:"Lease of the claims taken for seats (0: no expiry)."`
}

// Run brings a rig up. It exits 1 unless every seat is resumed,
// fresh-primed or already running.
func (c *rigUpCmd) Run(app *App) error {
	m, err := app.rigManager()
	if err != nil {
		return err
	}
	m.VerifyTimeout, m.TTL = c.VerifyTimeout, c.TTL
	res, err := m.Up(app.Ctx, rig.UpOptions{Rig: c.Name, Fresh: c.Fresh, Plan: c.Plan})
	if err != nil {
		return err
	}
	if err := app.render(res, func(w io.Writer) { printUp(w, res) }); err != nil {
		return err
	}
	if res.OK() {
		return nil
	}
	var bad []string
	for _, s := range res.Seats {
		if s.Outcome != events.SeatResumed && s.Outcome != events.SeatFreshPrimed && s.Outcome != events.SeatRunning {
			bad = append(bad, s.Address+" "+s.Outcome)
		}
	}
	verb := "is"
	if c.Plan {
		verb = "would be"
	}
	e := fault.New(fault.RestoreIncomplete, "rig %s %s %s: %s", c.Name, verb, res.Result, strings.Join(bad, ", ")).With("rig", c.Name).With("result", res.Result)
	for _, s := range res.Seats {
		if s.Hint != "" {
			return e.WithHint("%s", s.Hint)
		}
	}
	return e.WithHint("awr rig ps %s", c.Name)
}

func printUp(w io.Writer, res *rig.UpResult) {
	head := "rig " + res.Rig
	if res.Snapshot != nil {
		head += " from snapshot " + *res.Snapshot
	}
	if res.Plan {
		head += " (plan: nothing touched)"
	} else if res.Continued {
		head += " (continued unfinished restore " + res.RestoreID + ")"
	}
	fmt.Fprintf(w, "%s: %s\n", head, res.Result)
	for _, s := range res.Seats {
		fmt.Fprintf(w, "  %-24s %-18s %s\n", s.Address, s.Outcome, s.Reason)
		if s.Hint != "" && s.Outcome != events.SeatResumed && s.Outcome != events.SeatFreshPrimed {
			fmt.Fprintf(w, "  %-24s %-18s next: %s\n", "", "", s.Hint)
		}
	}
}

type rigDownCmd struct {
	Name     string        `arg:"" help:"Rig name." placeholder:"NAME"`
	Snapshot bool          `help:"Record a snapshot (per-seat manifest) to restore from."`
	Grace    time.Duration `default:"30s" help:"How long to wait for the live seats' checkpoints (one deadline for all)."`
	Message  string        `help:"Message typed to each agent instead of its seat's stop message." placeholder:"TEXT"`
}

// Run takes a rig down.
func (c *rigDownCmd) Run(app *App) error {
	m, err := app.rigManager()
	if err != nil {
		return err
	}
	res, err := m.Down(app.Ctx, rig.DownOptions{Rig: c.Name, Snapshot: c.Snapshot, Grace: c.Grace, Message: c.Message})
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "rig %s down", res.Rig)
		if res.Snapshot != nil {
			fmt.Fprintf(w, ", snapshot %s at seq %d", *res.Snapshot, res.SnapshotSeq)
		}
		fmt.Fprintln(w)
		for _, s := range res.Seats {
			state := "was stopped"
			switch {
			case s.WasRunning && s.Checkpointed:
				state = fmt.Sprintf("checkpointed (seq %d), stopped", s.CheckpointSeq)
			case s.WasRunning:
				state = "no checkpoint within the grace period, stopped"
			case s.Ended:
				state = "agent was gone, session ended"
			}
			fmt.Fprintf(w, "  %-24s %s\n", s.Address, state)
		}
	})
}

type rigPsCmd struct {
	Name string `arg:"" help:"Rig name." placeholder:"NAME"`
	atFlag
}

// Run lists a rig's seats.
func (c *rigPsCmd) Run(app *App) error {
	m, at, err := app.rigManagerAt(c.atFlag)
	if err != nil {
		return err
	}
	res, err := m.Ps(app.Ctx, c.Name, at)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "rig %s at revision %d", res.Rig, res.ProjectRevision)
		if res.UnfinishedRestore != "" {
			fmt.Fprintf(w, " (unfinished restore %s: run awr rig up %s)", res.UnfinishedRestore, res.Rig)
		}
		fmt.Fprintln(w)
		printSeats(w, res.Seats)
	})
}

type rigApplyCmd struct {
	File string `arg:"" help:"YAML spec." placeholder:"FILE"`
}

// Run applies a rig spec.
func (c *rigApplyCmd) Run(app *App) error {
	m, err := app.rigManager()
	if err != nil {
		return err
	}
	res, err := m.Apply(app.Ctx, c.File)
	if err != nil {
		return err
	}
	return app.render(res, func(w io.Writer) {
		fmt.Fprintf(w, "rig %s applied\n", res.Rig)
		for _, s := range res.Seats {
			fmt.Fprintf(w, "  %-24s %s\n", s.Address, s.Change)
		}
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// awrBinary is the awr executable agents should call: the one this process
// was started as (found on PATH as the user typed it, symlinks kept), else
// the running executable.
func awrBinary() string {
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	bin, _ := os.Executable()
	return bin
}
