package project

import (
	"context"
	"slices"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/audit"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
)

// AuditRequest is `awr audit` and awr_audit. Output is the CLI's only:
// the MCP tool returns the report and writes no file.
type AuditRequest struct {
	Read
	Session string `name:"session" json:"session,omitempty" help:"Report on this session and the chain of sessions it resumed from and that resumed it." placeholder:"ID"`
	Work    string `name:"work" json:"work,omitempty" help:"Report on this work item: every session that touched it." placeholder:"KEY"`
	Format  string `name:"format" default:"md" enum:"md,html" json:"format,omitempty" help:"md (Markdown, the default) or html (one self-contained page)."`
	Output  string `name:"output" short:"o" type:"path" json:"-" help:"Write the report to FILE (a temporary file, synced, then renamed) and print its path; FILE must not exist unless --force, and never lies in .awr/." placeholder:"FILE"`
	Force   bool   `name:"force" json:"-" help:"Replace an existing regular FILE."`
}

// AuditResult is `awr audit`: the report as data, the format it was
// rendered in, and the rendering itself (Text, left out of the JSON) or
// the file it was written to.
type AuditResult struct {
	audit.Report
	Format string `json:"format"`
	Output string `json:"output,omitempty"`
	Text   string `json:"-"`
}

// Audit gathers the chain-of-custody report of one session chain or one
// work item as of the request's revision and renders it; with Output it
// writes the rendering to that file atomically. The hash chain is checked
// by replay.VerifyChain, the code path of `awr verify`, and its verdict
// covers the log up to the revision.
// Errors: Usage for neither or both of Session and Work and for an
// unknown Format; NotFound for an unknown session or work item;
// VerifyFailed, with the report (rendered, or written) in the result,
// when the chain is broken at or before the revision;
// InvalidInput for an at revision beyond the head and for an Output that
// is not a regular file; Storage when the file cannot be written.
func (p *Project) Audit(ctx context.Context, req AuditRequest) (*AuditResult, error) {
	switch {
	case req.Session == "" && req.Work == "":
		return nil, fault.New(fault.Usage, "audit: give --session ID or --work KEY (one of them)").WithHint("awr session list")
	case req.Session != "" && req.Work != "":
		return nil, fault.New(fault.Usage, "audit: --session and --work exclude each other").
			With("session", req.Session).With("work", req.Work).WithHint("awr audit --work %s", req.Work)
	}
	subject := "--work " + req.Work
	if req.Session != "" {
		subject = "--session " + req.Session
	}
	format := req.Format
	if format == "" {
		format = audit.FormatMarkdown
	}
	if !slices.Contains(audit.Formats(), format) {
		return nil, fault.New(fault.Usage, "audit: --format %q: want md or html", req.Format).
			With("flag", "--format").With("formats", audit.Formats()).WithHint("awr audit %s --format html", subject)
	}
	if req.Output != "" {
		if err := pathcheck.Output(req.Output, req.Force); err != nil {
			return nil, refused("audit", "--output", err, p.outputHint(err, "awr audit "+subject, req.Output, "NEW_FILE"))
		}
	}
	res := &AuditResult{Format: format}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		rep, err := audit.Gather(r.Conn, req.Session, req.Work, rev)
		if err != nil {
			return err
		}
		res.Report = *rep
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []byte
	if format == audit.FormatHTML {
		out = audit.HTML(&res.Report)
	} else {
		out = audit.Markdown(&res.Report)
	}
	if req.Output == "" {
		res.Text = string(out)
	} else {
		if err := pathcheck.WriteFile(req.Output, out, 0o644, req.Force); err != nil {
			if pathcheck.RuleOf(err) != "" {
				return nil, refused("audit", "--output", err, p.outputHint(err, "awr audit "+subject, req.Output, "NEW_FILE"))
			}
			return nil, fault.Wrap(fault.Storage, err, "audit: write %s", req.Output)
		}
		res.Output = req.Output
	}
	if c := res.Chain; !c.Verified {
		return res, fault.New(fault.VerifyFailed, "audit: the report says NOT VERIFIED: seq %d: %s", c.FirstBadSeq, c.Problem).
			With("first_bad_seq", c.FirstBadSeq).With("project_revision", res.ProjectRevision).
			WithHint("awr audit %s --at %d", subject, c.FirstBadSeq-1)
	}
	return res, nil
}
