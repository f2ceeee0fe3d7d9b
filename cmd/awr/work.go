package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
)

type workCmd struct {
	Show     workShowCmd     `cmd:"" help:"A work item: as indexed, its provenance, progress, claim, sessions, knowledge, evidence and completion."`
	History  workHistoryCmd  `cmd:"" help:"Every event that concerns a work item, oldest first, a page at a time."`
	Claim    workClaimCmd    `cmd:"" help:"Claim a work item for a session working on it."`
	Release  workReleaseCmd  `cmd:"" help:"Release a work item's claim (its holder only)."`
	Handoff  workHandoffCmd  `cmd:"" help:"Move a work item's live claim to another live session (new claim id and fencing token, same lease)."`
	Complete workCompleteCmd `cmd:"" help:"Record a work item's completion once every acceptance criterion has passing evidence at the current repository state."`
}

type workShowCmd struct {
	project.WorkShowRequest
}

// knowledgePage is the command of the page of r's items in force after
// this one, at r's revision when the read was in the past, with the
// same page size.
func (c *workShowCmd) knowledgePage(r *project.WorkShowResult) string {
	cmd := "awr work show " + shellQuote(r.Work.Key)
	if c.At != nil {
		cmd += fmt.Sprintf(" --at %d", r.ProjectRevision)
	}
	if c.Limit != nil {
		cmd += fmt.Sprintf(" --limit %d", *c.Limit)
	}
	return cmd + " --knowledge-cursor " + r.KnowledgeNextCursor
}

// Run shows a work item.
func (c *workShowCmd) Run(app *App) error {
	return call(app, (*project.Project).WorkShow, c.WorkShowRequest, func(w io.Writer, r *project.WorkShowResult) {
		it := r.Work
		fmt.Fprintf(w, "%s: %s\n", it.Key, project.SafeText(it.Title))
		status := it.Status
		if it.RawStatus != "" && it.RawStatus != it.Status {
			status += " (" + it.RawStatus + " in the source)"
		}
		fmt.Fprintf(w, "status %s, priority %s, goal %s, milestone %s, owner %s\n", status, orDash(it.Priority), orDash(it.Goal), orDash(it.Milestone), orDash(it.Owner))
		fmt.Fprintf(w, "source %s:%d-%d (content %s, indexed at seq %d, item changed at seq %d)\n", r.Provenance.Source, r.Provenance.LineStart, r.Provenance.LineEnd,
			shortHash(r.Provenance.ContentHash), r.Provenance.IndexedSeq, r.Provenance.ChangedSeq)
		switch {
		case r.Ready:
			fmt.Fprintln(w, "ready: yes")
		default:
			var why []string
			for _, n := range r.NotReady {
				why = append(why, n.Message)
			}
			fmt.Fprintf(w, "ready: no (%s)\n", strings.Join(why, "; "))
		}
		if !r.Executable {
			var why []string
			for _, n := range r.NotExecutable {
				why = append(why, n.Message)
			}
			fmt.Fprintf(w, "executable: no (%s)\n", strings.Join(why, "; "))
		}
		fmt.Fprintf(w, "next action (source): %s\n", orDash(project.SafeText(r.Progress.Source)))
		if r.Progress.Checkpoint != "" {
			fmt.Fprintf(w, "next action (checkpoint seq %d): %s\n", r.Progress.CheckpointSeq, project.SafeText(r.Progress.Checkpoint))
		}
		if r.Claim != nil {
			fmt.Fprintf(w, "claim %s held by session %s (%s), fencing token %d\n", r.Claim.ID, r.Claim.SessionID, project.SafeText(r.Claim.Agent), r.Claim.FencingToken)
		} else {
			fmt.Fprintln(w, "claim: none")
		}
		if len(r.Sessions) > 0 {
			tw := newTable(w)
			fmt.Fprintln(tw, "SESSION\tAGENT\tSTATUS\tOUTCOME")
			for _, s := range r.Sessions {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, project.SafeText(s.Agent), s.Status, orDash(s.Outcome))
			}
			tw.Flush()
			if r.SessionsNextCursor != "" {
				fmt.Fprintf(w, "the latest %d of %d sessions; the older ones: awr session list --work %s --newest --cursor %s\n",
					len(r.Sessions), r.SessionsTotal, r.Work.Key, r.SessionsNextCursor)
			}
		}
		if k := r.Knowledge; k != nil {
			for _, l := range k.OpenLoops {
				fmt.Fprintf(w, "open loop %s: %s\n", l.ID, project.SafeText(l.Text))
			}
			for _, d := range k.Decisions {
				fmt.Fprintf(w, "decision %s: %s\n", d.ID, project.SafeText(d.Text))
			}
			for _, f := range k.Facts {
				fmt.Fprintf(w, "fact %s: %s\n", f.ID, project.SafeText(f.Text))
			}
			for _, h := range k.Hypotheses {
				fmt.Fprintf(w, "hypothesis %s (unverified): %s\n", h.ID, project.SafeText(h.Text))
			}
			if line := inForceLine(k, r.KnowledgeTotal, c.KnowledgeCursor != "", r.KnowledgeNextCursor, c.knowledgePage(r)); line != "" {
				fmt.Fprintln(w, line)
			}
		}
		comp := r.Completion
		fmt.Fprintf(w, "completion: %s (evidence level %s or stronger", comp.State, comp.LevelRequired)
		if !comp.RepoCompared {
			fmt.Fprint(w, "; repository not compared at a past revision")
		}
		fmt.Fprintln(w, ")")
		for _, c := range comp.Criteria {
			line := fmt.Sprintf("  %d. [%s] %s", c.Index, c.State, project.SafeText(c.Criterion))
			if c.Lacks != "" {
				line += ": " + c.Lacks
			}
			fmt.Fprintln(w, line)
		}
		if comp.AwaitingVerification {
			fmt.Fprintln(w, "the source marks it completed, but no verification is recorded: awaiting_verification")
		}
		if comp.Next != "" {
			fmt.Fprintf(w, "next: %s\n", comp.Next)
		}
	})
}

func shortHash(h string) string {
	h = strings.TrimPrefix(h, "sha256:")
	if len(h) > 12 {
		return h[:12]
	}
	return orDash(h)
}

type workHistoryCmd struct {
	project.WorkHistoryRequest
	All bool `name:"all" help:"Every event of the item, streamed as it is read (not with --limit)."`
}

// Run lists a work item's history: a page, or every event with --all.
func (c *workHistoryCmd) Run(app *App) error {
	if c.All {
		return c.all(app)
	}
	return call(app, (*project.Project).WorkHistory, c.WorkHistoryRequest, func(w io.Writer, r *project.WorkHistoryResult) {
		for _, e := range r.Events {
			historyLine(w, e)
		}
		if len(r.Events) == 0 {
			fmt.Fprintf(w, "no events concern %s after seq %d (project_revision %d)\n", r.Work, c.Since, r.ProjectRevision)
		}
		if r.NextSince != 0 {
			fmt.Fprintf(w, "next: awr work history %s --since %d\n", r.Work, r.NextSince)
		}
	})
}

// all prints every event of the item's history as it is read, in
// bounded memory: text lines, or with --json the object `awr work
// history --json` prints (work, project_revision, events, count) written
// event by event.
func (c *workHistoryCmd) all(app *App) error {
	if c.Limit != nil {
		return fault.New(fault.InvalidInput, "work history: --all lists every event: not with --limit").With("flag", "--limit").
			WithHint("awr work history %s --all", shellQuote(c.Key))
	}
	p, err := app.project()
	if err != nil {
		return err
	}
	var key bytes.Buffer // as the page's JSON writes it: no HTML escaping
	if err := writeJSONValue(&key, c.Key); err != nil {
		return err
	}
	s := newEventStream(app, `"work":`+key.String()+",", func(e project.LogEvent) string {
		var b strings.Builder
		historyLine(&b, e)
		return project.Inert(b.String())
	})
	err = p.WorkHistoryEach(app.Ctx, c.WorkHistoryRequest, s.start, s.event)
	return s.end(err, func(head int64) string {
		return fmt.Sprintf("no events concern %s after seq %d (project_revision %d)", project.SafeLine(c.Key), c.Since, head)
	})
}

// historyLine is one event as `awr work history` prints it.
func historyLine(w io.Writer, e project.LogEvent) {
	fmt.Fprintf(w, "%6d  %s  %-20s %-34s %s\n", e.Seq, time.UnixMilli(e.OccurredAt).UTC().Format("2006-01-02T15:04:05Z"), e.Kind, e.Stream, clip(string(e.Payload), 100))
}

type workClaimCmd struct {
	project.WorkClaimRequest
}

// Run claims a work item.
func (c *workClaimCmd) Run(app *App) error {
	return call(app, (*project.Project).WorkClaim, c.WorkClaimRequest, claimAcquiredText(app))
}

type workReleaseCmd struct {
	project.WorkReleaseRequest
}

// Run releases a work item's claim.
func (c *workReleaseCmd) Run(app *App) error {
	return call(app, (*project.Project).WorkRelease, c.WorkReleaseRequest, func(w io.Writer, r *project.ClaimResult) {
		fmt.Fprintf(w, "claim on %s released by session %s\n", r.Claim.Work, r.Claim.SessionID)
	})
}

type workHandoffCmd struct {
	project.WorkHandoffRequest
}

// Run hands a work item's claim over.
func (c *workHandoffCmd) Run(app *App) error {
	return call(app, (*project.Project).WorkHandoff, c.WorkHandoffRequest, func(w io.Writer, r *project.WorkHandoffResult) {
		fmt.Fprintf(w, "%s handed off: claim %s of session %s (token %d) released; claim %s acquired by session %s (token %d), lease unchanged\n",
			r.Work, r.Released.ID, r.FromSession, r.Released.FencingToken, r.Claim.ID, r.ToSession, r.Claim.FencingToken)
		fmt.Fprintf(w, "next: awr recovery inspect --session %s\n", r.ToSession)
	})
}

type workCompleteCmd struct {
	project.WorkCompleteRequest
}

// Run records a work item's completion.
func (c *workCompleteCmd) Run(app *App) error {
	return call(app, (*project.Project).WorkComplete, c.WorkCompleteRequest, func(w io.Writer, r *project.WorkCompleteResult) {
		fmt.Fprintf(w, "%s verified at seq %d (level %s): every acceptance criterion has passing evidence\n", r.Verified.Work, r.Seq, r.Verified.Level)
		for _, c := range r.Criteria {
			fmt.Fprintf(w, "  %d. %s: evidence %s (%s)\n", c.Index, project.SafeText(c.Criterion), c.Evidence.EvidenceID, c.Evidence.Level)
		}
		fmt.Fprintf(w, "next: awr session end --session %s --outcome completed\n", r.Verified.SessionID)
	})
}

type evidenceCmd struct {
	Add evidenceAddCmd `cmd:"" help:"Record evidence against an acceptance criterion: a command awr runs, a reported result, a file or a note."`
}

type evidenceAddCmd struct {
	project.EvidenceAddRequest
}

// Run records evidence.
func (c *evidenceAddCmd) Run(app *App) error {
	return call(app, (*project.Project).EvidenceAdd, c.EvidenceAddRequest, func(w io.Writer, r *project.EvidenceAddResult) {
		for _, l := range r.OutputTail {
			fmt.Fprintf(w, "  | %s\n", project.SafeText(l))
		}
		e := r.Evidence
		verdict := "passed"
		if !e.Passed {
			verdict = "failed"
		}
		what := e.Basis
		switch e.Basis {
		case "command":
			what = fmt.Sprintf("command %q", e.Command)
			if e.ExitCode != nil {
				what += fmt.Sprintf(" exit %d", *e.ExitCode)
			}
		case "file":
			what = "file " + e.Path + " " + shortHash(e.FileHash)
		}
		fmt.Fprintf(w, "evidence %s for %s criterion %d (%s): %s, %s, level %s\n", e.EvidenceID, e.Work, e.Index, project.SafeText(e.Criterion), what, verdict, e.Level)
		fmt.Fprintf(w, "next: awr work show %s\n", e.Work)
	})
}
