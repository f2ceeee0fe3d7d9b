package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/awr-dev/awr/internal/project"
)

type execCmd struct {
	Run  execRunCmd  `cmd:"" help:"Run a side effect at most once per work item and key: recorded before it runs and after; a second run replays the result."`
	List execListCmd `cmd:"" help:"List executions (running, unknown, succeeded, failed), oldest first."`
	Show execShowCmd `cmd:"" help:"Show one execution: its command, repository, exit, output and what to do if it is unknown."`
}

type execRunCmd struct {
	project.ExecRunRequest
}

// Run runs the command once and exits with its exit status (the recorded
// one when the key had already run). With --json the command's stdout
// goes to stderr, so stdout holds only the result.
func (c *execRunCmd) Run(app *App) error {
	p, err := app.project()
	if err != nil {
		return err
	}
	req := c.ExecRunRequest
	if len(req.Argv) > 0 && req.Argv[0] == "--" {
		req.Argv = req.Argv[1:] // kong passes the separator through
	}
	out := app.Stdout
	if app.JSON {
		out = app.Stderr
	}
	res, err := p.ExecRun(app.Ctx, req, app.Stdin, out, app.Stderr)
	if res == nil {
		return err
	}
	if app.JSON {
		if err := app.render(res, nil); err != nil {
			return err
		}
	} else {
		x := res.Execution
		if res.Replayed {
			fmt.Fprintf(app.Stderr, "awr: key %s on %s already ran: execution %s %s%s at seq %d; not run again (output kept in %s)\n",
				x.Key, x.Work, x.ID, x.State, exitText(&x), x.FinishedSeq, x.OutputDir)
		} else {
			fmt.Fprintf(app.Stderr, "awr: execution %s of %s on %s %s%s in %d ms (output kept in %s)\n", x.ID, x.Key, x.Work, x.State, exitText(&x), x.DurationMs, x.OutputDir)
		}
	}
	if res.ExitStatus != 0 {
		// Exit with the command's status, as a wrapper does; the deferred
		// cleanups of run still happen.
		panic(exitCode(res.ExitStatus))
	}
	return err
}

func exitText(x *project.ExecutionView) string {
	switch {
	case x.Signal != "":
		return " (" + x.Signal + ")"
	case x.Error != "":
		return " (" + safe(x.Error) + ")"
	case x.ExitCode != nil:
		return fmt.Sprintf(" (exit %d)", *x.ExitCode)
	}
	return ""
}

type execListCmd struct {
	project.ExecListRequest
}

// Run lists executions.
func (c *execListCmd) Run(app *App) error {
	return call(app, (*project.Project).ExecList, c.ExecListRequest, func(w io.Writer, res *project.ExecList) {
		if len(res.Executions) == 0 {
			fmt.Fprintf(w, "no executions (project_revision %d)\n", res.ProjectRevision)
			return
		}
		for _, x := range res.Executions {
			fmt.Fprintf(w, "%s  %-9s %s on %s%s, seq %d\n", x.ID, x.State, safe(x.Key), x.Work, exitText(&x), x.StartedSeq)
		}
		if res.NextCursor != "" {
			fmt.Fprintf(w, "… %d executions in all; the next page: %s\n", res.ExecutionsTotal, nextExecPage(c.ExecListRequest, res.NextCursor))
		}
	})
}

// nextExecPage is the command that lists the page after this one.
func nextExecPage(req project.ExecListRequest, cursor string) string {
	var flags []string
	if req.Work != "" {
		flags = append(flags, "--work "+shellQuote(req.Work))
	}
	if req.Session != "" {
		flags = append(flags, "--session "+shellQuote(req.Session))
	}
	return nextPage("awr exec list", req.At, flags, req.Limit, cursor)
}

type execShowCmd struct {
	project.ExecShowRequest
}

// Run shows one execution.
func (c *execShowCmd) Run(app *App) error {
	return call(app, (*project.Project).ExecShow, c.ExecShowRequest, func(w io.Writer, res *project.ExecShowResult) {
		x := res.Execution
		fmt.Fprintf(w, "execution %s of %s on %s: %s%s (project_revision %d)\n", x.ID, safe(x.Key), x.Work, x.State, exitText(&x), res.ProjectRevision)
		if x.Purpose != "" {
			fmt.Fprintf(w, "purpose: %s\n", safe(x.Purpose))
		}
		fmt.Fprintf(w, "command: %s (in %s)\n", safe(strings.Join(x.Argv, " ")), x.Cwd)
		fmt.Fprintf(w, "started at seq %d by session %s", x.StartedSeq, x.SessionID)
		if x.Repo != nil && x.Repo.Head != "" {
			fmt.Fprintf(w, ", HEAD %.12s", x.Repo.Head)
		}
		fmt.Fprintln(w)
		if x.FinishedSeq > 0 {
			fmt.Fprintf(w, "finished at seq %d after %d ms; stdout %d bytes, stderr %d bytes, kept in %s\n", x.FinishedSeq, x.DurationMs, x.Stdout.Bytes, x.Stderr.Bytes, x.OutputDir)
		}
		if x.Retries != "" {
			fmt.Fprintf(w, "retries: %s\n", x.Retries)
		}
		if x.RetriedBy != "" {
			fmt.Fprintf(w, "retried by: %s\n", x.RetriedBy)
		}
		if res.Next != "" {
			fmt.Fprintf(w, "next: %s\n", res.Next)
		}
	})
}
