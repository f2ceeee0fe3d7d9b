package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/awr-dev/awr/internal/project"
)

type rigCmd struct {
	Up    rigUpCmd    `cmd:"" help:"Launch every stopped seat, restoring from the latest snapshot: one outcome per seat."`
	Down  rigDownCmd  `cmd:"" help:"Ask each seat to checkpoint, optionally snapshot, then stop the seats."`
	Ps    rigPsCmd    `cmd:"" help:"Each seat's state, session, conversation and last outcome."`
	Apply rigApplyCmd `cmd:"" help:"Declare a rig's seats from a YAML spec (seats it no longer lists are removed)."`

	Send     rigSendCmd     `cmd:"" help:"Type a message into a running seat's pane, then Enter (recorded for the audit)."`
	Capture  rigCaptureCmd  `cmd:"" help:"The last lines of a seat's pane, lines that look like a credential withheld."`
	Snapshot rigSnapshotCmd `cmd:"" help:"Record a snapshot of a running rig and leave it running."`

	RestoreCheck rigRestoreCheckCmd `cmd:"" name:"restore-check" help:"Before an up: check each seat's directory, program, conversation, repository and work (writes nothing)."`
}

type rigRestoreCheckCmd struct {
	project.RigRestoreCheckRequest
}

// Run checks what a rig up depends on. It exits 1 unless the up would
// come back fully_restored with no red check.
func (c *rigRestoreCheckCmd) Run(app *App) error {
	return call(app, (*project.Project).RigRestoreCheck, c.RigRestoreCheckRequest, func(w io.Writer, res *project.RigRestoreCheckResult) {
		fmt.Fprintf(w, "rig %s restore-check: %s (rig up would be %s)\n", res.Rig, res.Status, res.Result)
		printChecks(w, "  ", res.Checks)
		for _, s := range res.Seats {
			fmt.Fprintf(w, "  %s: %s, would be %s: %s\n", s.Address, s.Status, s.Outcome, s.Reason)
			printChecks(w, "    ", s.Checks)
		}
	})
}

func printChecks(w io.Writer, indent string, checks []*project.RigCheck) {
	for _, c := range checks {
		fmt.Fprintf(w, "%s%-6s %-12s %s\n", indent, c.Status, c.Name, c.Evidence)
		if c.Remediation != "" {
			fmt.Fprintf(w, "%s%-6s %-12s next: %s\n", indent, "", "", c.Remediation)
		}
	}
}

type rigUpCmd struct {
	project.RigUpRequest
}

// Run brings a rig up. It exits 1 unless every seat is resumed,
// fresh-primed or already running.
func (c *rigUpCmd) Run(app *App) error {
	return call(app, (*project.Project).RigUp, c.RigUpRequest, func(w io.Writer, res *project.RigUpResult) { printUp(w, res) })
}

func printUp(w io.Writer, res *project.RigUpResult) {
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
		if s.Hint != "" && s.Outcome != project.OutcomeResumed && s.Outcome != project.OutcomeFreshPrimed {
			fmt.Fprintf(w, "  %-24s %-18s next: %s\n", "", "", s.Hint)
		}
	}
}

type rigDownCmd struct {
	project.RigDownRequest
}

// Run takes a rig down.
func (c *rigDownCmd) Run(app *App) error {
	return call(app, (*project.Project).RigDown, c.RigDownRequest, func(w io.Writer, res *project.RigDownResult) {
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
	project.RigPsRequest
}

// Run lists a rig's seats.
func (c *rigPsCmd) Run(app *App) error {
	return call(app, (*project.Project).RigPs, c.RigPsRequest, func(w io.Writer, res *project.PsResult) {
		fmt.Fprintf(w, "rig %s at revision %d", res.Rig, res.ProjectRevision)
		if res.UnfinishedRestore != "" {
			fmt.Fprintf(w, " (unfinished restore %s: run awr rig up %s)", res.UnfinishedRestore, res.Rig)
		}
		fmt.Fprintln(w)
		printSeats(w, res.Seats)
	})
}

type rigApplyCmd struct {
	project.RigApplyRequest
}

// Run applies a rig spec.
func (c *rigApplyCmd) Run(app *App) error {
	return call(app, (*project.Project).RigApply, c.RigApplyRequest, func(w io.Writer, res *project.RigApplyResult) {
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

type rigSendCmd struct {
	project.RigSendRequest
}

// Run types a message into a seat's pane.
func (c *rigSendCmd) Run(app *App) error {
	return call(app, (*project.Project).RigSend, c.RigSendRequest, func(w io.Writer, res *project.RigSendResult) {
		verb := "sent"
		if res.Replayed {
			verb = "already sent"
		}
		fmt.Fprintf(w, "%s %d bytes to %s (seq %d)\n", verb, res.Bytes, res.Address, res.Seq)
		fmt.Fprintf(w, "next: awr rig capture %s\n", res.Address)
	})
}

type rigCaptureCmd struct {
	project.RigCaptureRequest
}

// Run prints a seat's last pane lines.
func (c *rigCaptureCmd) Run(app *App) error {
	return call(app, (*project.Project).RigCapture, c.RigCaptureRequest, func(w io.Writer, res *project.RigCaptureResult) {
		for _, l := range res.Lines {
			fmt.Fprintln(w, l)
		}
		if !res.Running {
			fmt.Fprintf(w, "(%s: the agent is not running)\n", res.Address)
		}
	})
}

type rigSnapshotCmd struct {
	project.RigSnapshotRequest
}

// Run snapshots a running rig.
func (c *rigSnapshotCmd) Run(app *App) error {
	return call(app, (*project.Project).RigSnapshot, c.RigSnapshotRequest, func(w io.Writer, res *project.RigSnapshotResult) {
		fmt.Fprintf(w, "rig %s snapshot %s at seq %d (the rig keeps running)\n", res.Rig, res.Snapshot, res.SnapshotSeq)
		for _, s := range res.Seats {
			state := "stopped"
			if s.Running {
				state = "running"
			}
			fmt.Fprintf(w, "  %-24s %-8s checkpoint seq %d, conversation %s\n", s.Address, state, s.CheckpointSeq, orDash(s.Conversation))
		}
	})
}
