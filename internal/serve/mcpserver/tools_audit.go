package mcpserver

import (
	"context"

	"github.com/awr-dev/awr/internal/project"
)

// auditAnswer is awr_audit's result: the report as data, exactly as
// `awr audit --json` gives it, and its rendering in the format asked for.
type auditAnswer struct {
	*project.AuditResult
	Text string `json:"text"`
}

// auditTools holds awr_audit, which writes no file: output is the CLI's
// only (json:"-" on the request), and the rendering comes back as text.
var auditTools = []entry{
	toolOf(tool{name: "awr_audit", title: "Chain-of-custody report", readOnly: true,
		desc: "The chain-of-custody report of one session (with the sessions it resumed from and that resumed it) or one work item (every session on it), as `awr audit --json`: " +
			"claims with fencing tokens and leases, every checkpoint in full with the knowledge it changed and kept, resumes and what they carried, restatement checks and their verdicts, host bindings and events, executions, evidence, the repository at each checkpoint, each entry's event seq and hash, and the hash chain's verdict up to the revision. " +
			"text holds the report rendered in format (md, the default, or html); the same at for the same log gives the same bytes. Give exactly one of session and work."},
		func(ctx context.Context, p *project.Project, in project.AuditRequest) (*auditAnswer, error) {
			in.Output = ""
			res, err := p.Audit(ctx, in)
			if res == nil {
				return nil, err
			}
			return &auditAnswer{AuditResult: res, Text: res.Text}, err
		}),
}
