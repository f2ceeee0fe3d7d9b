package main

import (
	"fmt"
	"io"

	"github.com/awr-dev/awr/internal/project"
)

type seatCmd struct {
	Add    seatAddCmd    `cmd:"" help:"Declare a seat (ROLE@RIG): how its agent starts and resumes, its work and its restore policy."`
	Remove seatRemoveCmd `cmd:"" help:"Retire a stopped seat (its history stays in the log)."`
	Show   seatShowCmd   `cmd:"" help:"A seat and its occupants over time: sessions, conversations, outcomes."`
	List   seatListCmd   `cmd:"" help:"List seats with their state."`

	ClearAttention seatClearAttentionCmd `cmd:"" name:"clear-attention" help:"Answer a seat's attention_required: record what you checked and decided."`
	Reconcile      seatReconcileCmd      `cmd:"" help:"Adopt the session someone resumed from a seat's session by hand, recording who and why."`
}

type seatReconcileCmd struct {
	project.SeatReconcileRequest
}

// Run adopts a hand-resumed session as the seat's.
func (c *seatReconcileCmd) Run(app *App) error {
	return call(app, (*project.Project).SeatReconcile, c.SeatReconcileRequest, func(w io.Writer, res *project.SeatReconcileResult) {
		state := "ended"
		if res.SessionActive {
			state = "running"
		}
		fmt.Fprintf(w, "seat %s adopted session %s (%s, resumed by hand for %s) in place of %s, by %s: %s\n", res.Address, res.SessionID, state, res.Agent, res.FromSession, res.By, res.Reason)
		fmt.Fprintf(w, "next: awr rig up %s\n", res.Seat.Rig)
	})
}

type seatClearAttentionCmd struct {
	project.SeatClearAttentionRequest
}

// Run answers a seat's attention_required.
func (c *seatClearAttentionCmd) Run(app *App) error {
	return call(app, (*project.Project).SeatClearAttention, c.SeatClearAttentionRequest, func(w io.Writer, res *project.SeatClearAttentionResult) {
		fmt.Fprintf(w, "seat %s: attention_required of seq %d answered: %s\n", res.Address, res.AttentionSeq, res.Reason)
		fmt.Fprintf(w, "next: awr rig up %s\n", res.Seat.Rig)
	})
}

type seatAddCmd struct {
	project.SeatAddRequest
}

// Run declares a seat.
func (c *seatAddCmd) Run(app *App) error {
	return call(app, (*project.Project).SeatAdd, c.SeatAddRequest, func(w io.Writer, res *project.SeatResult) {
		verb := "declared"
		if !res.Changed {
			verb = "unchanged"
		}
		fmt.Fprintf(w, "seat %s %s (runtime %s, policy %s, work %s)\n", res.Seat.Address, verb, res.Seat.Runtime, res.Seat.Policy, orDash(res.Seat.Work))
	})
}

type seatRemoveCmd struct {
	project.SeatRemoveRequest
}

// Run retires a seat.
func (c *seatRemoveCmd) Run(app *App) error {
	return call(app, (*project.Project).SeatRemove, c.SeatRemoveRequest, func(w io.Writer, res *project.SeatResult) { fmt.Fprintf(w, "seat %s removed\n", c.Address) })
}

type seatShowCmd struct {
	project.SeatShowRequest
}

// Run shows a seat.
func (c *seatShowCmd) Run(app *App) error {
	return call(app, (*project.Project).SeatShow, c.SeatShowRequest, func(w io.Writer, res *project.SeatShowResult) {
		s := res.Seat
		fmt.Fprintf(w, "seat %s: %s (runtime %s, policy %s, work %s)\n", s.Address, res.State, s.Runtime, s.Policy, orDash(s.Work))
		if s.LastOutcome != "" {
			fmt.Fprintf(w, "last outcome: %s: %s\n", s.LastOutcome, s.LastReason)
		}
		tw := newTable(w)
		fmt.Fprintln(tw, "LAUNCHED\tMODE\tSESSION\tCONVERSATION\tENDED\tOUTCOME")
		for _, o := range res.Occupants {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", o.LaunchedSeq, o.Mode, o.SessionID, orDash(o.Conversation), orDash(o.Ended), orDash(o.Outcome))
		}
		tw.Flush()
	})
}

type seatListCmd struct {
	project.SeatListRequest
}

// Run lists seats.
func (c *seatListCmd) Run(app *App) error {
	return call(app, (*project.Project).SeatList, c.SeatListRequest, func(w io.Writer, res *project.SeatListResult) { printSeats(w, res.Seats) })
}

func printSeats(w io.Writer, seats []*project.PsSeat) {
	tw := newTable(w)
	fmt.Fprintln(tw, "SEAT\tSTATE\tPOLICY\tSESSION\tCONVERSATION\tLAST OUTCOME\tTMUX SESSION")
	for _, s := range seats {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Address, s.State, s.Policy, orDash(s.SessionID), orDash(s.Conversation), orDash(s.LastOutcome), orDash(s.TmuxSession))
	}
	tw.Flush()
	for _, s := range seats {
		if s.Hint != "" {
			fmt.Fprintf(w, "%s: %s; next: %s\n", s.Address, s.State, s.Hint)
		}
	}
}
