package project

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/pathcheck"
	"github.com/awr-dev/awr/internal/recovery"
)

type (
	// RecoveryVerifyRequest is `awr recovery verify` and
	// awr_recovery_verify.
	RecoveryVerifyRequest = commands.VerifyRestatementRequest
	// Restatement is a successor's account of its handoff.
	Restatement = commands.Restatement
	// RestatementResult is the verdict of `awr recovery verify`.
	RestatementResult = commands.RestatementResult
)

// maxRestatement bounds a restatement read from a file or stdin.
const maxRestatement = 1 << 20

// RecoveryVerify checks a successor's restatement of its handoff against
// the recorded state and the repository now, and records the check. The
// restatement comes inline (req.Restatement), or as JSON from req.Input: a
// file, or "-" for stdin.
// Errors: InvalidInput for a missing, unreadable or malformed restatement
// (naming the file and line); RestatementMismatch, with the result, when
// the verdict is attention_required; those of commands.VerifyRestatement.
func (p *Project) RecoveryVerify(ctx context.Context, req RecoveryVerifyRequest, stdin io.Reader) (*RestatementResult, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	if req.Restatement == nil && req.Input != "" {
		if req.Restatement, err = p.readRestatement(ctx, req.Input, stdin); err != nil {
			return nil, err
		}
	}
	if req.Repo, err = p.repoCheck(ctx, "", req.Session); err != nil {
		return nil, err
	}
	return commands.VerifyRestatement(ctx, env, req)
}

// readRestatement reads and strictly decodes a restatement
// (recovery.DecodeRestatement): from stdin for "-", else from a regular
// file of at most maxRestatement bytes (pathcheck.ReadFile; relative to
// the working directory when it is there, to the project otherwise;
// inside the project for a Confined project). The read stops when ctx is
// done.
func (p *Project) readRestatement(ctx context.Context, input string, stdin io.Reader) (*Restatement, error) {
	name := input
	var raw []byte
	var err error
	if input == "-" {
		name = "stdin"
		if stdin == nil {
			stdin = bytes.NewReader(nil)
		}
		raw, err = pathcheck.ReadAll(ctx, stdin, maxRestatement, name)
	} else {
		path := input
		if !filepath.IsAbs(path) {
			if _, serr := os.Stat(path); serr != nil || p.opts.Confined {
				path = filepath.Join(p.dir, input)
			}
		}
		if p.opts.Confined {
			if _, err := pathcheck.Inside(p.dir, path); err != nil {
				return nil, refused("recovery verify", "--input", err, "awr recovery verify --help")
			}
		}
		raw, err = pathcheck.ReadFile(ctx, path, maxRestatement)
	}
	if pathcheck.RuleOf(err) != "" {
		return nil, refused("recovery verify", "--input", err, "awr recovery verify --help")
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fault.New(fault.InvalidInput, "recovery verify: read %s: %v", name, err).With("flag", "--input").With("path", name)
	}
	return recovery.DecodeRestatement(name, raw)
}
