package project

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/fault"
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
		if req.Restatement, err = readRestatement(req.Input, stdin, p.dir); err != nil {
			return nil, err
		}
	}
	if req.Repo, err = p.repoCheck(ctx, "", req.Session); err != nil {
		return nil, err
	}
	return commands.VerifyRestatement(ctx, env, req)
}

// readRestatement reads and strictly decodes a restatement.
func readRestatement(input string, stdin io.Reader, dir string) (*Restatement, error) {
	name := input
	var raw []byte
	var err error
	if input == "-" {
		name = "stdin"
		if stdin == nil {
			stdin = bytes.NewReader(nil)
		}
		raw, err = io.ReadAll(io.LimitReader(stdin, maxRestatement+1))
	} else {
		path := input
		if !filepath.IsAbs(path) {
			if _, serr := os.Stat(path); serr != nil {
				path = filepath.Join(dir, input)
			}
		}
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fault.New(fault.InvalidInput, "recovery verify: read %s: %v", name, err).With("flag", "--input").With("path", name)
	}
	if len(raw) > maxRestatement {
		return nil, fault.New(fault.InvalidInput, "recovery verify: %s is larger than %d bytes", name, maxRestatement).With("flag", "--input").With("path", name)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var rs Restatement
	if err := dec.Decode(&rs); err != nil {
		line := 1 + bytes.Count(raw[:min(int(dec.InputOffset()), len(raw))], []byte("\n"))
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = 1 + bytes.Count(raw[:min(int(se.Offset), len(raw))], []byte("\n"))
		}
		return nil, fault.New(fault.InvalidInput, "recovery verify: %s:%d: %v", name, line, err).With("path", name).With("line", line).
			WithHint("awr recovery verify --help")
	}
	if dec.More() {
		return nil, fault.New(fault.InvalidInput, "recovery verify: %s: more than one JSON value", name).With("path", name)
	}
	return &rs, nil
}
