package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
)

type recoveryCmd struct {
	Inspect recoveryInspectCmd `cmd:"" help:"Where a session stands and the exact command to run next (read-only)."`
	Verify  recoveryVerifyCmd  `cmd:"" help:"Prove a handoff was understood: check a successor's restatement against the recorded state and the repository."`
}

type recoveryVerifyCmd struct {
	project.RecoveryVerifyRequest
}

// Run checks a restatement; exit 1 (RestatementMismatch) unless verified.
func (c *recoveryVerifyCmd) Run(app *App) error {
	verify := func(p *project.Project, ctx context.Context, req project.RecoveryVerifyRequest) (*project.RestatementResult, error) {
		return p.RecoveryVerify(ctx, req, app.Stdin)
	}
	return call(app, verify, c.RecoveryVerifyRequest, func(w io.Writer, res *project.RestatementResult) {
		fmt.Fprintf(w, "restatement of session %s (checkpoint %s): %s (seq %d)\n", res.Session, res.Checkpoint, res.Verdict, res.Seq)
		for _, it := range res.Items {
			fmt.Fprintf(w, "%-12s %-16s expected %q, stated %q\n", it.Status, it.Field, it.Expected, it.Stated)
		}
	})
}

type recoveryInspectCmd struct {
	project.RecoveryInspectRequest
	All bool `name:"all" help:"Every event changed and every item closed since the checkpoint (or the cursors), streamed as they are read (not with --limit)."`
}

// Run reports recovery state, each line worded for the state it reports:
// a released or moved claim names no lease, a session without a
// checkpoint lists its work's log as such, and what changed since a
// checkpoint is always said, nothing included. The events changed and
// the items closed since the checkpoint are a page each, with the
// command of the next page; --all lists every one.
func (c *recoveryInspectCmd) Run(app *App) error {
	if c.All {
		return c.all(app)
	}
	return call(app, (*project.Project).RecoveryInspect, c.RecoveryInspectRequest, func(w io.Writer, rep *project.RecoveryReport) {
		c.text(w, rep, false)
		fmt.Fprintf(w, "next: %s\n", rep.NextStep)
	})
}

// text writes the report but its next step; with streamed, without its
// two lists (the closed items, the events changed), which --all writes
// after it as they are read.
func (c *recoveryInspectCmd) text(w io.Writer, rep *project.RecoveryReport, streamed bool) {
	s := rep.Session
	fmt.Fprintf(w, "session %s on %s: %s (project_revision %d)\n", s.ID, s.Work, strings.TrimSpace(s.Status+" "+s.Outcome), rep.ProjectRevision)
	fmt.Fprintf(w, "claim: %s\n", claimLine(rep))
	cp := rep.Checkpoint
	if cp != nil {
		from := ""
		if rep.Inherited {
			from = " (inherited from " + cp.SessionID + ")"
		}
		fmt.Fprintf(w, "last checkpoint %s%s: %s\nnext action: %s\n", cp.ID, from, safe(cp.Digest), safe(cp.NextAction))
		if rep.NextAction.DiffersFromSource {
			fmt.Fprintf(w, "the register's next action differs: %s\n", safe(rep.NextAction.Source))
		}
		for _, ch := range rep.RegisterChanges {
			fmt.Fprintf(w, "changed in the register since the checkpoint: %s (seq %d): %q -> %q\n", ch.Field, ch.Seq, ch.Then, ch.Now)
		}
		printKnowledgePage(w, rep.Knowledge, inForceLine(rep.Knowledge, rep.KnowledgeTotal, c.KnowledgeCursor != "", rep.KnowledgeNextCursor, c.pageCommand(rep, "--knowledge-cursor", rep.KnowledgeNextCursor)))
		if k := rep.Knowledge; k != nil && c.ClosedSince != nil && k.Since != cp.Seq-1 {
			fmt.Fprintf(w, "closed after seq %d: %d listed\n", k.Since, len(k.Closed))
		}
		if k := rep.Knowledge; k != nil && k.ClosedMore > 0 {
			fmt.Fprintf(w, "closed since the checkpoint: %d listed, %d more (%s)\n", len(k.Closed), k.ClosedMore, c.pageCommand(rep, "--closed-since", fmt.Sprint(rep.ClosedNextSince)))
		}
		if rep.Repository != nil {
			printRepository(w, rep.Repository)
		} else if c.At != nil {
			fmt.Fprintln(w, "repository: not compared at a past revision (--at)")
		}
	} else {
		fmt.Fprintf(w, "no checkpoint recorded on %s\n", s.Work)
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
	if !streamed {
		var kinds []string
		for _, e := range rep.ChangedSince {
			kinds = append(kinds, fmt.Sprintf("%d %s", e.Seq, e.Kind))
		}
		list := strings.Join(kinds, ", ")
		if rep.ChangedMore > 0 {
			list += fmt.Sprintf("; %d more (%s)", rep.ChangedMore, c.pageCommand(rep, "--changed-since", fmt.Sprint(rep.ChangedNextSince)))
		}
		// A later page (--changed-since) says where it starts.
		later := c.ChangedSince != nil && (cp == nil || rep.ChangedSinceSeq != cp.Seq)
		switch {
		case later && len(kinds) > 0:
			fmt.Fprintf(w, "changed on %s after seq %d: %s\n", s.Work, rep.ChangedSinceSeq, list)
		case later:
			fmt.Fprintf(w, "nothing changed on %s after seq %d\n", s.Work, rep.ChangedSinceSeq)
		case cp == nil && len(kinds) > 0:
			fmt.Fprintf(w, "log of %s (no checkpoint to compare with): %s\n", s.Work, list)
		case cp != nil && len(kinds) > 0:
			fmt.Fprintf(w, "changed on %s since the checkpoint: %s\n", s.Work, list)
		case cp != nil:
			fmt.Fprintf(w, "nothing changed on %s since the checkpoint\n", s.Work)
		}
	}
	for _, x := range rep.Executions {
		fmt.Fprintf(w, "executed: %s %s%s (seq %d; awr exec show %s)\n", safe(x.Key), x.State, exitText(&x), x.StartedSeq, x.ID)
	}
	if len(rep.MissingSources) > 0 {
		fmt.Fprintf(w, "sources unavailable: %s (in the manifest, not on disk): the packet is incomplete and a compile refuses\n", safe(strings.Join(rep.MissingSources, ", ")))
	} else if len(rep.StaleSources) > 0 {
		fmt.Fprintf(w, "sources changed since they were indexed: %s: the packet is incomplete and a compile refuses until a reindex\n", safe(strings.Join(rep.StaleSources, ", ")))
	}
}

// pageCommand is the command of the page of rep's list that flag's
// cursor starts after, at rep's revision when the read was in the
// past, with the same page size (the other lists from their start).
func (c *recoveryInspectCmd) pageCommand(rep *project.RecoveryReport, flag, cursor string) string {
	cmd := "awr recovery inspect --session " + rep.Session.ID
	if c.At != nil {
		cmd += fmt.Sprintf(" --at %d", rep.ProjectRevision)
	}
	cmd += fmt.Sprintf(" %s %s", flag, cursor)
	if c.Limit != nil {
		cmd += fmt.Sprintf(" --limit %d", *c.Limit)
	}
	return cmd
}

// all writes the report with every event changed and every item closed
// since the checkpoint (or the cursors), as they are read, in bounded
// memory: the text, its lists one line an entry, or with --json the
// object `awr recovery inspect --json` prints, its two arrays written
// element by element (their counts and next cursors absent: nothing
// follows).
func (c *recoveryInspectCmd) all(app *App) error {
	if c.Limit != nil {
		return fault.New(fault.InvalidInput, "recovery inspect: --all lists every event and item: not with --limit").With("flag", "--limit").
			WithHint("awr recovery inspect --session %s --all", c.Session)
	}
	p, err := app.project()
	if err != nil {
		return err
	}
	w := bufio.NewWriter(app.Stdout)
	var out recoveryStream
	if app.JSON {
		out = &recoveryJSON{w: w, hints: app.hints}
	} else {
		out = &recoveryText{w: w, cmd: c, hints: app.hints}
	}
	err = p.RecoveryInspectEach(app.Ctx, c.RecoveryInspectRequest, out.start, func(e project.LogEvent) error {
		if err := app.Ctx.Err(); err != nil {
			return err
		}
		return out.changed(e)
	}, func(k *project.KnowledgeItem) error {
		if err := app.Ctx.Err(); err != nil {
			return err
		}
		return out.closed(k)
	})
	if err == nil {
		err = out.end()
	}
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

// recoveryStream writes a report with its lists as they are read
// (`awr recovery inspect --all`): start with the report, its lists
// empty, then each changed event, then each closed item, then end.
type recoveryStream interface {
	start(rep *project.RecoveryReport) error
	changed(e project.LogEvent) error
	closed(k *project.KnowledgeItem) error
	end() error
}

// recoveryText is the text of --all: the report, then the events
// changed one line each as awr log prints them, then the items closed,
// then the next step.
type recoveryText struct {
	w                *bufio.Writer
	cmd              *recoveryInspectCmd
	hints            hinter
	rep              *project.RecoveryReport
	changes, closes  int
	closedHeaderDone bool
}

func (t *recoveryText) start(rep *project.RecoveryReport) error {
	t.rep = rep
	var b strings.Builder
	t.cmd.text(&b, rep, true)
	what := "changed on %s since seq %d:\n"
	if rep.Checkpoint == nil {
		what = "log of %s (no checkpoint to compare with) after seq %d:\n"
	}
	fmt.Fprintf(&b, what, project.SafeLine(rep.Session.Work), rep.ChangedSinceSeq)
	_, err := t.w.WriteString(project.Inert(t.hints.lines(b.String())))
	return err
}

func (t *recoveryText) changed(e project.LogEvent) error {
	t.changes++
	_, err := t.w.WriteString(inertLine(e))
	return err
}

func (t *recoveryText) closed(k *project.KnowledgeItem) error {
	if !t.closedHeaderDone {
		t.closedHeaderDone = true
		if err := t.closedHeader(); err != nil {
			return err
		}
	}
	t.closes++
	note := ""
	if k.Note != "" {
		note = ": " + safe(k.Note)
	}
	_, err := t.w.WriteString(project.Inert(fmt.Sprintf("%s %s %s at seq %d%s\n", k.Kind, k.ID, k.State, k.ClosedSeq, note)))
	return err
}

// closedHeader ends the list of changed events and opens that of closed
// items.
func (t *recoveryText) closedHeader() error {
	fmt.Fprintf(t.w, "%d events listed\n", t.changes)
	_, err := fmt.Fprintf(t.w, "closed on %s after seq %d:\n", project.SafeLine(t.rep.Session.Work), t.rep.Knowledge.Since)
	return err
}

func (t *recoveryText) end() error {
	if t.rep.Knowledge == nil {
		fmt.Fprintf(t.w, "%d events listed\n", t.changes)
	} else {
		if !t.closedHeaderDone {
			if err := t.closedHeader(); err != nil {
				return err
			}
		}
		fmt.Fprintf(t.w, "%d items listed\n", t.closes)
	}
	_, err := t.w.WriteString(project.Inert(t.hints.lines("next: " + t.rep.NextStep + "\n")))
	return err
}

// recoveryJSON is the JSON of --all: the object the page prints, its
// arrays changed_since_checkpoint and knowledge.closed_since_checkpoint
// written element by element between the report's other fields.
type recoveryJSON struct {
	w     *bufio.Writer
	hints hinter
	// parts are the report's JSON around its two arrays: up to the first
	// element of changed_since_checkpoint, from its end up to the first
	// element of closed_since_checkpoint (or to the end without
	// knowledge), and from that array's end.
	parts           [][]byte
	written         int // parts written
	changes, closes int
}

func (j *recoveryJSON) start(rep *project.RecoveryReport) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rep); err != nil {
		return err
	}
	doc := j.hints.json(buf.Bytes())
	cuts, err := arrayStarts(doc, []string{"changed_since_checkpoint"}, []string{"knowledge", "closed_since_checkpoint"})
	if err != nil {
		return err
	}
	prev := 0
	for _, c := range cuts {
		j.parts = append(j.parts, doc[prev:c])
		prev = c
	}
	j.parts = append(j.parts, doc[prev:])
	return j.next()
}

// next writes the next part of the report around its arrays.
func (j *recoveryJSON) next() error {
	_, err := j.w.Write(j.parts[j.written])
	j.written++
	return err
}

func (j *recoveryJSON) changed(e project.LogEvent) error {
	if j.changes++; j.changes > 1 {
		if err := j.w.WriteByte(','); err != nil {
			return err
		}
	}
	return writeJSONValue(j.w, e)
}

func (j *recoveryJSON) closed(k *project.KnowledgeItem) error {
	if j.closes == 0 {
		if err := j.next(); err != nil {
			return err
		}
	}
	if j.closes++; j.closes > 1 {
		if err := j.w.WriteByte(','); err != nil {
			return err
		}
	}
	return writeJSONValue(j.w, k)
}

func (j *recoveryJSON) end() error {
	for j.written < len(j.parts) {
		if err := j.next(); err != nil {
			return err
		}
	}
	return nil
}

// arrayStarts returns, for each path of keys (an object's key, then a key
// of the object it holds, ...), the offset in doc just inside the empty
// array ("[]") found there, in the order the paths come in doc; a path
// whose value is not there (null knowledge) gives none.
// Errors: a doc that is not one JSON object, or a value at a path that is
// not an empty array.
func arrayStarts(doc []byte, paths ...[]string) ([]int, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var cuts []int
	var walk func(prefix []string) error
	walk = func(prefix []string) error {
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return fmt.Errorf("recovery inspect --all: not an object at %v (%v)", prefix, err)
		}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			path := append(slices.Clone(prefix), tok.(string))
			switch kind := pathKind(paths, path); kind {
			case "array":
				if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
					return fmt.Errorf("recovery inspect --all: %v is not an array", path)
				}
				cuts = append(cuts, int(dec.InputOffset()))
				if tok, err := dec.Token(); err != nil || tok != json.Delim(']') {
					return fmt.Errorf("recovery inspect --all: %v is not empty", path)
				}
			case "object":
				if bytes.HasPrefix(bytes.TrimLeft(doc[dec.InputOffset():], " :"), []byte("null")) {
					var skip json.RawMessage
					if err := dec.Decode(&skip); err != nil {
						return err
					}
					continue
				}
				if err := walk(path); err != nil {
					return err
				}
			default:
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return err
				}
			}
		}
		_, err := dec.Token() // '}'
		return err
	}
	if err := walk(nil); err != nil {
		return nil, err
	}
	return cuts, nil
}

// pathKind says what path is among paths: the whole of one ("array"),
// the start of one ("object"), or neither ("").
func pathKind(paths [][]string, path []string) string {
	for _, p := range paths {
		if len(path) <= len(p) && slices.Equal(p[:len(path)], path) {
			if len(path) == len(p) {
				return "array"
			}
			return "object"
		}
	}
	return ""
}

// claimLine says what the session's claim is, worded for its state: only
// a live or expired claim has a lease to speak of.
func claimLine(rep *project.RecoveryReport) string {
	cl := rep.Claim
	if cl == nil {
		return "none"
	}
	switch cl.StateNow {
	case "live":
		return fmt.Sprintf("live, fencing token %d, %s", cl.FencingToken, leaseEnd(cl.ExpiresAt, false))
	case "expired":
		return fmt.Sprintf("%s, fencing token %d", leaseEnd(cl.ExpiresAt, true), cl.FencingToken)
	case "moved":
		if rep.SuccessorID != "" {
			return fmt.Sprintf("moved to successor %s (fencing token %d here)", rep.SuccessorID, cl.FencingToken)
		}
		return fmt.Sprintf("moved (fencing token %d here)", cl.FencingToken)
	}
	why := ""
	if cl.ReleaseReason != "" {
		why = " (" + cl.ReleaseReason + ")"
	}
	return fmt.Sprintf("%s%s, fencing token %d", cl.StateNow, why, cl.FencingToken)
}

// printRepository writes one line on what the repository did since the
// checkpoint it was compared with.
func printRepository(w io.Writer, r *project.RepoCheck) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "repository since checkpoint %s: %s", r.Checkpoint, r.Status)
	switch {
	case r.Status == "unverifiable":
		fmt.Fprintf(w, " (%s)", safe(r.Reason))
	case r.HeadRewritten:
		fmt.Fprintf(w, "; HEAD %.12s is not an ancestor of HEAD %.12s", r.RecordedHead, r.CurrentHead)
	case r.HeadMoved:
		fmt.Fprintf(w, "; HEAD moved %.12s -> %.12s (%d commits)", r.RecordedHead, r.CurrentHead, r.CommitsBetween)
	}
	if r.WorktreeChanged {
		fmt.Fprint(w, "; worktree changed")
	}
	if n := len(r.FilesChanged); n > 0 {
		fmt.Fprintf(w, "; files changed: %d", n)
	}
	fmt.Fprintln(w)
}
