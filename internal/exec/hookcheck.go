package exec

// The check of a hook's command line, which runs the awr binary the line
// names: here, with the other processes a person's command starts (the
// door's client install passes it to hosts.ApplyInstall), never in the
// hosts package, which answers hosts on an agent's word and starts no
// process.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/awr-dev/awr/internal/hosts"
)

// hookCheckTimeout bounds how long the hook command's awr binary may take
// to answer `version --json`.
const hookCheckTimeout = 3 * time.Second

// CheckHookCommand is the check of a hook command line (hosts.Change's
// Check, for `awr client install`): the awr binary it runs exists, is
// executable, and answers `version --json` within hookCheckTimeout. A
// relative program is looked up as the host would: on PATH (this
// process's), or under dir when it names a directory.
func CheckHookCommand(ctx context.Context, command, dir string) hosts.Check {
	c := hosts.Check{Name: "hook_command"}
	words := hosts.ProgramWords(command)
	if len(words) == 0 {
		c.Detail = "the command line is empty"
		return c
	}
	prog := words[0]
	var bin string
	switch {
	case strings.ContainsAny(prog, "$`~"):
		c.Detail = fmt.Sprintf("%s is expanded by the host's shell; awr cannot check it", prog)
		return c
	case strings.ContainsRune(prog, filepath.Separator) || strings.ContainsRune(prog, '/'):
		bin = prog
		if !filepath.IsAbs(bin) {
			bin = filepath.Join(dir, bin)
		}
	default:
		found, err := osexec.LookPath(prog)
		if err != nil {
			c.Detail = fmt.Sprintf("%s is not on PATH", prog)
			return c
		}
		bin = found
	}
	fi, err := os.Stat(bin)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Detail = fmt.Sprintf("%s does not exist", bin)
		return c
	case err != nil:
		c.Detail = fmt.Sprintf("%s: %v", bin, err)
		return c
	case !fi.Mode().IsRegular():
		c.Detail = fmt.Sprintf("%s is not a regular file", bin)
		return c
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
		c.Detail = fmt.Sprintf("%s is not executable", bin)
		return c
	}
	cctx, cancel := context.WithTimeout(ctx, hookCheckTimeout)
	defer cancel()
	cmd := osexec.CommandContext(cctx, bin, "version", "--json")
	cmd.Dir = dir
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if cctx.Err() != nil {
		c.Detail = fmt.Sprintf("%s version --json did not answer within %s", bin, hookCheckTimeout)
		return c
	}
	if err != nil {
		c.Detail = fmt.Sprintf("%s version --json: %v", bin, err)
		return c
	}
	var v struct {
		Version string `json:"version"`
	}
	if json.Unmarshal(bytes.TrimSpace(out), &v) != nil || v.Version == "" {
		c.Detail = fmt.Sprintf("%s version --json did not print awr's version", bin)
		return c
	}
	c.OK, c.Detail = true, fmt.Sprintf("%s answers: awr %s", bin, v.Version)
	return c
}
