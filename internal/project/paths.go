package project

import (
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
)

// namedPath returns a path a request names, absolute: relative to the
// working directory the CLI runs in when the project was found above it,
// to the project directory otherwise. For a Confined project (the MCP
// server) it must resolve inside the project.
// Errors: InvalidInput (rule outside_project) naming op and flag, with
// hint.
func (p *Project) namedPath(op, flag, path, hint string) (string, error) {
	abs, err := pathcheck.Abs(p.dir, p.fromWorkingDir(path))
	if err != nil {
		return "", pathcheck.Fault(op, flag, err)
	}
	if p.opts.Confined {
		if _, err := pathcheck.Inside(p.dir, abs); err != nil {
			return "", pathcheck.Fault(op, flag, err).WithHint("%s", hint)
		}
	}
	return abs, nil
}

// workDir checks a working directory a request names (relative to the
// project, symbolic links followed): inside the project or a git worktree
// of its repository, and, when exist, a directory (pathcheck.WorkDir);
// inside the project itself for a Confined project. It returns the
// directory absolute.
// Errors: InvalidInput naming op and flag (no hint: the caller's).
func (p *Project) workDir(op, flag, path string, exist bool) (string, *fault.Error) {
	dir, err := pathcheck.WorkDir(p.dir, path, exist)
	if err == nil && p.opts.Confined {
		_, err = pathcheck.Inside(p.dir, dir)
	}
	if err != nil {
		return "", pathcheck.Fault(op, flag, err)
	}
	if pathcheck.InState(dir) {
		// An agent working in .awr/ would write awr's own state.
		return "", fault.New(fault.InvalidInput, "%s: %s %s: is inside .awr/, where only awr writes its own state; name a directory of the project", op, flag, path).
			With("flag", flag).With("path", path).With("rule", string(pathcheck.RuleState))
	}
	return dir, nil
}

// outputHint is the hint for an output path refused by err: cmd with
// "--output PATH --force" for an existing file in the project, cmd with
// "--output " and placeholder otherwise (a hint names no path outside the
// project).
func (p *Project) outputHint(err error, cmd, path, placeholder string) string {
	if pathcheck.RuleOf(err) == pathcheck.RuleExists {
		if shown := p.shown(path, ""); shown != "" {
			return cmd + " --output " + shown + " --force"
		}
	}
	return cmd + " --output " + placeholder
}

// shown is path for a hint when it lies in the project (outside .awr),
// placeholder otherwise.
func (p *Project) shown(path, placeholder string) string {
	return pathcheck.Shown(p.dir, path, placeholder)
}

// refused is err from pathcheck as the error shown, with hint (none when
// hint is "").
func refused(op, flag string, err error, hint string) *fault.Error {
	fe := pathcheck.Fault(op, flag, err)
	if hint != "" {
		fe.WithHint("%s", hint)
	}
	return fe
}
