package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/project"
)

func ms(t int64) string {
	if t == 0 {
		return "-"
	}
	return time.UnixMilli(t).UTC().Format(time.RFC3339)
}

// lease says when a claim's lease ends, for a reader at now (UTC ms): a
// claim without expiry exists only when the manifest says so.
func lease(expiresAt, now int64) string {
	return leaseEnd(expiresAt, expiresAt != 0 && expiresAt <= now)
}

// leaseEnd is lease for a caller that knows whether the lease lapsed.
func leaseEnd(expiresAt int64, expired bool) string {
	switch {
	case expiresAt == 0:
		return "no expiry (manifest claim_ttl_ms = 0)"
	case expired:
		return "expired at " + ms(expiresAt)
	}
	return "expires " + ms(expiresAt)
}

type sessionCmd struct {
	Start      sessionStartCmd      `cmd:"" help:"Start a session on a work item, optionally claiming it."`
	Checkpoint sessionCheckpointCmd `cmd:"" help:"Record what was done, the next action and the open loops (its texts together at most 262144 bytes, 256 KiB)."`
	End        sessionEndCmd        `cmd:"" help:"End a session and release its claim."`
	Resume     sessionResumeCmd     `cmd:"" help:"Continue a session in a new one that inherits its checkpoint and claim."`
	Show       sessionShowCmd       `cmd:"" help:"Show a session with its claim, checkpoints and bindings."`
	List       sessionListCmd       `cmd:"" help:"List sessions."`
}

type sessionStartCmd struct {
	project.SessionStartRequest
}

// Run starts a session.
func (c *sessionStartCmd) Run(app *App) error {
	return call(app, (*project.Project).SessionStart, c.SessionStartRequest, func(w io.Writer, res *project.SessionStartResult) {
		fmt.Fprintf(w, "session %s started on %s by %s (project_revision %d)\n", res.Session.ID, safeLine(res.Session.Work), safeLine(res.Session.Agent), res.ProjectRevision)
		if res.Claim != nil {
			fmt.Fprintf(w, "claim %s, fencing token %d, %s\n", res.Claim.ID, res.Claim.FencingToken, lease(res.Claim.ExpiresAt, app.Now().UnixMilli()))
		}
		fmt.Fprintf(w, "next: awr context compile --work %s --session %s\n", res.Session.Work, res.Session.ID)
	})
}

type sessionCheckpointCmd struct {
	project.SessionCheckpointRequest
}

// Run records a checkpoint.
func (c *sessionCheckpointCmd) Run(app *App) error {
	return call(app, (*project.Project).SessionCheckpoint, c.SessionCheckpointRequest, func(w io.Writer, res *project.CheckpointResult) {
		cp := res.Checkpoint
		fmt.Fprintf(w, "checkpoint %s at seq %d (context hash verified: %v)\n", cp.ID, cp.Seq, cp.ContextHashVerified)
		if cp.ContextHashNote != "" {
			fmt.Fprintf(w, "context hash not verified: %s\n", cp.ContextHashNote)
		}
		fmt.Fprintf(w, "next action: %s\n", safe(cp.NextAction))
		if r := cp.Repo; r != nil && r.State != nil {
			since := "(no earlier state recorded)"
			if r.FilesSince != "" {
				since = "since " + r.FilesSince
			}
			fmt.Fprintf(w, "repository: HEAD %.12s, dirty %v, %d files changed %s\n", r.State.Head, r.State.Dirty, len(r.FilesChanged), since)
		} else if r != nil {
			fmt.Fprintf(w, "repository: unverifiable (%s)\n", safeLine(r.Unverifiable))
		}
		printKnowledge(w, res.Knowledge)
		for _, warn := range res.Warnings {
			fmt.Fprintf(w, "warning %s: %s\n", warn.Code, warn.Message)
		}
	})
}

type sessionEndCmd struct {
	project.SessionEndRequest
}

// Run ends a session.
func (c *sessionEndCmd) Run(app *App) error {
	return call(app, (*project.Project).SessionEnd, c.SessionEndRequest, func(w io.Writer, res *project.SessionEndResult) {
		fmt.Fprintf(w, "session %s ended: %s (project_revision %d)\n", res.Session.ID, res.Session.Outcome, res.ProjectRevision)
		if res.ReleasedClaim != nil {
			fmt.Fprintf(w, "released claim on %s\n", res.ReleasedClaim.Work)
		}
		fmt.Fprintf(w, "the work item's status stays as its source says; update %s there when it is done\n", res.Session.Work)
	})
}

type sessionResumeCmd struct {
	project.SessionResumeRequest
}

// Run resumes a session.
func (c *sessionResumeCmd) Run(app *App) error {
	shortLived()
	project.WarmTokenizer()
	return call(app, (*project.Project).SessionResume, c.SessionResumeRequest, func(w io.Writer, res *project.ResumeResult) {
		s := res.Resumed.Session
		fmt.Fprintf(w, "session %s resumes %s on %s (project_revision %d)\n", s.ID, res.Resumed.FromSession, s.Work, res.ProjectRevision)
		if res.Resumed.Claim != nil {
			fmt.Fprintf(w, "claim: fencing token %d, %s\n", res.Resumed.Claim.FencingToken, lease(res.Resumed.Claim.ExpiresAt, app.Now().UnixMilli()))
		}
		if cp := res.Checkpoint; cp != nil {
			fmt.Fprintf(w, "inherited checkpoint %s: %s\nnext action: %s\n", cp.ID, safe(cp.Digest), safe(cp.NextAction))
		}
		printKnowledge(w, res.Knowledge)
		if res.Context != nil {
			printRepository(w, res.Context.Repository)
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
	project.SessionShowRequest
}

// Run shows a session: a page of its checkpoints and one of its work's
// items in force, each cut list ended by the command of its next page;
// with --all (and no --limit) every one, the checkpoints written as they
// are read (all).
func (c *sessionShowCmd) Run(app *App) error {
	if c.All && c.Limit == nil {
		return c.all(app)
	}
	return call(app, (*project.Project).SessionShow, c.SessionShowRequest, func(w io.Writer, v *project.SessionView) {
		tw := newTable(w)
		c.headRows(tw, app, v)
		for _, cp := range v.Checkpoints {
			checkpointRow(tw, cp)
		}
		bindingRows(tw, v)
		tw.Flush()
		c.tail(w, v)
	})
}

// headRows writes the rows of v's table before its checkpoints: the
// session and its claims.
func (c *sessionShowCmd) headRows(tw io.Writer, app *App, v *project.SessionView) {
	s := v.Session
	agent := safe(s.Agent)
	if pm := strings.TrimSpace(s.Provider + " " + s.Model); pm != "" {
		agent += " (" + safe(pm) + ")"
	}
	fmt.Fprintf(tw, "session\t%s\nwork\t%s\nagent\t%s\nstatus\t%s\nstarted\t%s (seq %d)\n", s.ID, safeLine(s.Work), agent, strings.TrimSpace(s.Status+" "+s.Outcome), ms(s.StartedAt), s.StartRevision)
	if s.PredecessorID != "" {
		fmt.Fprintf(tw, "predecessor\t%s\n", s.PredecessorID)
	}
	if s.SuccessorID != "" {
		fmt.Fprintf(tw, "successor\t%s\n", s.SuccessorID)
	}
	for _, cl := range v.Claims {
		fmt.Fprintf(tw, "claim\t%s token %d, %s, %s\n", cl.ID, cl.FencingToken, cl.StateAt(app.Now().UnixMilli()), lease(cl.ExpiresAt, app.Now().UnixMilli()))
	}
}

// checkpointRow writes the row of one checkpoint of `awr session show`.
func checkpointRow(tw io.Writer, cp project.Checkpoint) {
	fmt.Fprintf(tw, "checkpoint\tseq %d: %s | next: %s\n", cp.Seq, safe(cp.Digest), safe(cp.NextAction))
}

// bindingRows writes the rows of the conversations bound to v's session.
func bindingRows(tw io.Writer, v *project.SessionView) {
	for _, b := range v.Bindings {
		fmt.Fprintf(tw, "bound\t%s (%s)\n", safeLine(b.ExternalSession), safeLine(b.Client))
	}
}

// tail writes what follows v's table: the command of the older
// checkpoints when there are, then the knowledge.
func (c *sessionShowCmd) tail(w io.Writer, v *project.SessionView) {
	if v.CheckpointsNextCursor != "" {
		fmt.Fprintf(w, "the latest %d of %d checkpoints; the older ones: %s\n", len(v.Checkpoints), v.CheckpointsTotal, c.pageCommand(v, "--checkpoints-cursor", v.CheckpointsNextCursor))
	}
	printKnowledgePage(w, v.Knowledge, inForceLine(v.Knowledge, v.KnowledgeTotal, c.KnowledgeCursor != "", v.KnowledgeNextCursor, c.pageCommand(v, "--knowledge-cursor", v.KnowledgeNextCursor)))
}

// all writes the session with every checkpoint (before the checkpoints
// cursor) as they are read, in bounded memory, and every item in force:
// the text, its checkpoints in blocks of sessionBlock rows each aligned
// on its own, or with --json the object `awr session show --json`
// prints, its checkpoints array written element by element.
func (c *sessionShowCmd) all(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	out := bufio.NewWriter(app.Stdout)
	var view *project.SessionView
	var rest []byte // the JSON after the checkpoints array's start
	var block []project.Checkpoint
	n := 0
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		err := app.render(nil, func(w io.Writer) {
			tw := newTable(w)
			for _, cp := range block {
				checkpointRow(tw, cp)
			}
			tw.Flush()
		})
		block = block[:0]
		return err
	}
	err = p.SessionShowEach(app.Ctx, c.SessionShowRequest, func(v *project.SessionView) error {
		view = v
		if !app.JSON {
			return app.render(nil, func(w io.Writer) {
				tw := newTable(w)
				c.headRows(tw, app, v)
				tw.Flush()
			})
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		doc := app.hints.json(buf.Bytes())
		cuts, err := arrayStarts(doc, []string{"checkpoints"})
		if err != nil {
			return err
		}
		rest = doc[cuts[0]:]
		_, err = out.Write(doc[:cuts[0]])
		return err
	}, func(cp project.Checkpoint) error {
		if err := app.Ctx.Err(); err != nil {
			return err
		}
		n++
		if !app.JSON {
			if block = append(block, cp); len(block) == sessionBlock {
				return flush()
			}
			return nil
		}
		if n > 1 {
			if err := out.WriteByte(','); err != nil {
				return err
			}
		}
		return writeJSONValue(out, cp)
	})
	if err == nil && app.JSON {
		_, err = out.Write(rest)
	}
	if err == nil && !app.JSON {
		if err = flush(); err == nil {
			err = app.render(nil, func(w io.Writer) {
				tw := newTable(w)
				bindingRows(tw, view)
				tw.Flush()
				c.tail(w, view)
			})
		}
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// pageCommand is the command of the next page of v's list that flag's
// cursor selects, at v's revision when the read was in the past, with
// the same page size (the other list from its first page).
func (c *sessionShowCmd) pageCommand(v *project.SessionView, flag, cursor string) string {
	cmd := "awr session show " + v.Session.ID
	if c.At != nil {
		cmd += fmt.Sprintf(" --at %d", v.ProjectRevision)
	}
	if c.Limit != nil {
		cmd += fmt.Sprintf(" --limit %d", *c.Limit)
	}
	return cmd + " " + flag + " " + cursor
}

type sessionListCmd struct {
	project.SessionListRequest
}

// Run lists sessions; a stale one says so in its status, and the
// commands that end the stale ones follow the table.
func (c *sessionListCmd) Run(app *App) error {
	if c.All && c.Limit == nil {
		return c.all(app)
	}
	return call(app, (*project.Project).SessionList, c.SessionListRequest, func(w io.Writer, out *project.SessionList) {
		sessionTable(w, out.Sessions)
		staleLines(w, out.Sessions)
		if out.NextCursor != "" {
			fmt.Fprintf(w, "… %d sessions in all; the next page: %s\n", out.SessionsTotal, nextSessionPage(c.SessionListRequest, out.NextCursor))
		}
	})
}

// sessionTable writes the table of sessions.
func sessionTable(w io.Writer, ss []project.SessionEntry) {
	tw := newTable(w)
	fmt.Fprintln(tw, "SESSION\tWORK\tAGENT\tSTATUS\tSTARTED\tLAST CHECKPOINT")
	for _, s := range ss {
		st := s.Status
		switch {
		case s.Stale:
			st = "stale"
		case s.Outcome != "":
			st += " (" + s.Outcome + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", s.ID, s.Work, safe(s.Agent), st, ms(s.StartedAt), s.LastCheckpointSeq)
	}
	tw.Flush()
}

// staleLines writes the command that ends each stale session of ss.
func staleLines(w io.Writer, ss []project.SessionEntry) {
	for _, s := range ss {
		if s.Stale {
			fmt.Fprintf(w, "stale %s, idle since %s, holds no claim; end it: %s\n", s.ID, ms(s.IdleSince), s.EndCommand)
		}
	}
}

// sessionBlock is how many rows of `awr session list --all` are held
// and printed at once.
const sessionBlock = 1000

// all prints every session the filters select as it is read, in bounded
// memory (a long log holds tens of thousands): with --json the object
// the other pages print (sessions, then the counts and the revision),
// written session by session; as text the table in blocks of
// sessionBlock rows, each aligned on its own, then the commands that end
// the stale ones (stale sessions are among the active ones: few).
func (c *sessionListCmd) all(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	// Nothing reaches stdout before the first session: an error of the
	// read (a bad cursor, an unknown work item) leaves it empty.
	out := bufio.NewWriter(app.Stdout)
	var block, stale []project.SessionEntry
	flush := func() error {
		if len(block) == 0 {
			return nil
		}
		err := app.render(nil, func(w io.Writer) { sessionTable(w, block) })
		block = block[:0]
		return err
	}
	n := 0
	var buf bytes.Buffer
	head, err := p.SessionListEach(app.Ctx, c.SessionListRequest, func(e project.SessionEntry) error {
		if err := app.Ctx.Err(); err != nil {
			return err
		}
		n++
		if !app.JSON {
			if e.Stale {
				stale = append(stale, e)
			}
			if block = append(block, e); len(block) == sessionBlock {
				return flush()
			}
			return nil
		}
		sep := ","
		if n == 1 {
			sep = `{"sessions":[`
		}
		if _, err := out.WriteString(sep); err != nil {
			return err
		}
		buf.Reset()
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(e); err != nil {
			return err
		}
		_, err := out.Write(bytes.TrimSuffix(app.hints.json(buf.Bytes()), []byte("\n")))
		return err
	})
	if err != nil {
		return err
	}
	if app.JSON {
		// The rest of the object, as SessionList encodes it.
		tail, err := json.Marshal(struct {
			SessionsTotal   int   `json:"sessions_total"`
			StaleCount      int   `json:"stale_count"`
			ProjectRevision int64 `json:"project_revision"`
		}{head.SessionsTotal, head.StaleCount, head.ProjectRevision})
		if err != nil {
			return err
		}
		if n == 0 {
			out.WriteString(`{"sessions":[`)
		}
		fmt.Fprintf(out, "],%s\n", tail[1:])
		return out.Flush()
	}
	if n == 0 {
		block = nil
		return app.render(nil, func(w io.Writer) { sessionTable(w, nil) })
	}
	if err := flush(); err != nil {
		return err
	}
	if len(stale) == 0 {
		return nil
	}
	return app.render(nil, func(w io.Writer) { staleLines(w, stale) })
}

// nextSessionPage is the command that lists the page after cursor, with
// the request's other flags.
func nextSessionPage(req project.SessionListRequest, cursor string) string {
	var flags []string
	if req.Active {
		flags = append(flags, "--active")
	}
	if req.Stale {
		flags = append(flags, "--stale")
	}
	if req.Work != "" {
		flags = append(flags, "--work "+shellQuote(req.Work))
	}
	if req.Newest {
		flags = append(flags, "--newest")
	}
	return nextPage("awr session list", req.At, flags, req.Limit, cursor)
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

// printKnowledge writes a work item's open loops, decisions, facts and
// hypotheses, each with its id, and what the latest checkpoint closed.
func printKnowledge(w io.Writer, k *project.KnowledgeState) { printKnowledgePage(w, k, "") }

// printKnowledgePage writes k as printKnowledge does, with page, when
// not "", the line that ends its page of the items in force
// (inForceLine), between them and the items closed.
func printKnowledgePage(w io.Writer, k *project.KnowledgeState, page string) {
	if k == nil {
		return
	}
	for _, l := range k.OpenLoops {
		fmt.Fprintf(w, "open loop %s: %s\n", l.ID, safe(l.Text))
	}
	for _, d := range k.Decisions {
		fmt.Fprintf(w, "decision %s: %s\n", d.ID, safe(d.Text))
	}
	for _, f := range k.Facts {
		fmt.Fprintf(w, "fact %s: %s\n", f.ID, safe(f.Text))
	}
	for _, h := range k.Hypotheses {
		fmt.Fprintf(w, "hypothesis %s (unverified): %s\n", h.ID, safe(h.Text))
	}
	if page != "" {
		fmt.Fprintln(w, page)
	}
	for _, c := range k.Closed {
		note := ""
		if c.Note != "" {
			note = ": " + safe(c.Note)
		}
		fmt.Fprintf(w, "%s %s %s%s\n", c.Kind, c.ID, c.State, note)
	}
}

// inForceLine is the line that follows a page of the items in force k
// lists, of total: how many it lists and, when more follow (next is
// their cursor), nextPage, the command of the next page; "" when the
// page lists them all from the first (paged false).
func inForceLine(k *project.KnowledgeState, total int, paged bool, next, nextPage string) string {
	if k == nil || next == "" && !paged {
		return ""
	}
	n := len(k.OpenLoops) + len(k.Decisions) + len(k.Facts) + len(k.Hypotheses)
	if next == "" {
		return fmt.Sprintf("in force: %d listed, the last page of %d", n, total)
	}
	return fmt.Sprintf("in force: %d listed of %d; the next page: %s", n, total, nextPage)
}

// safe renders a recorded value for the terminal (project.SafeText).
func safe(s string) string { return project.SafeText(s) }

// safeLine renders a recorded name for one cell of a text view
// (project.SafeLine).
func safeLine(s string) string { return project.SafeLine(s) }
