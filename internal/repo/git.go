package repo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
)

// gitBinary is the git executable the exported functions run; tests build
// their own runner instead of changing it.
const gitBinary = "git"

// runner runs one git executable. The zero value is not usable; use
// defaultRunner or a runner naming another binary.
type runner struct {
	bin string
}

var defaultRunner = runner{bin: gitBinary}

// repoLocationEnv are the variables that would point git at a repository
// other than the one containing the directory given.
var repoLocationEnv = []string{
	"GIT_DIR",
	"GIT_WORK_TREE",
	"GIT_INDEX_FILE",
	"GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_COMMON_DIR",
	"GIT_NAMESPACE",
	"GIT_PREFIX",
}

// gitEnv is the environment every git process runs with.
func gitEnv() []string {
	env := os.Environ()
	out := env[:0:0]
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		drop := name == "GIT_OPTIONAL_LOCKS" || name == "LC_ALL" || name == "GIT_TERMINAL_PROMPT"
		for _, v := range repoLocationEnv {
			if name == v {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return append(out, "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
}

// gitError is a git process that ran and exited non-zero.
type gitError struct {
	args   []string
	code   int
	stderr string
}

func (e *gitError) Error() string {
	msg := fmt.Sprintf("git %s: exit status %d", e.args[0], e.code)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

// run runs git in dir with args and returns its standard output. A git that
// cannot be started is ErrNoGit; a non-zero exit is a *gitError carrying the
// trimmed standard error; a cancelled context is the context's error.
func (r runner) run(ctx context.Context, dir string, stdin io.Reader, args ...string) ([]byte, error) {
	full := append([]string{"-C", dir, "-c", "core.quotepath=off"}, args...)
	cmd := exec.CommandContext(ctx, r.bin, full...)
	cmd.Env = gitEnv()
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return stdout.Bytes(), nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return stdout.Bytes(), &gitError{args: args, code: exitErr.ExitCode(), stderr: strings.TrimSpace(stderr.String())}
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return nil, fmt.Errorf("%w: %s", ErrNoGit, err)
	}
	return nil, err
}

// exitCode reports the exit code of a *gitError, or -1 for any other error.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// unverifiable turns err into an *Unverifiable prefixed with op, keeping an
// existing *Unverifiable's cause.
func unverifiable(op string, err error) *Unverifiable {
	var u *Unverifiable
	if errors.As(err, &u) {
		return u
	}
	var cause error
	switch {
	case errors.Is(err, ErrNoGit):
		cause = ErrNoGit
	case errors.Is(err, ErrNotRepo):
		cause = ErrNotRepo
	case errors.Is(err, context.Canceled):
		cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		cause = context.DeadlineExceeded
	}
	return &Unverifiable{Reason: op + ": " + err.Error(), Err: cause}
}

// splitNUL splits NUL-terminated records, dropping the empty tail.
func splitNUL(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// isHexID reports whether s is a full object id (sha1 or sha256).
func isHexID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
