//go:build awrtest

package main

// The hint runner, in test builds only (the awrtest tag): while the
// test scripts run (fixtures/scripttest sets $AWR_TEST_HINTS), every
// `awr` a script executes also collects the hints it printed (the error's hint, each
// next: and to accept: line, the hint fields of a JSON answer) and runs
// each of them, at once, in a copy of the script's work directory, as
// the user would paste it into a shell. A hint that is a usage error
// (exit 2), names no command awr has, finds no project, or holds a
// placeholder where awr knows the real value fails the script that
// printed it.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"github.com/awr-dev/awr/internal/lazyre"
	"github.com/awr-dev/awr/internal/shellwords"
)

// hintsEnv names the directory where one script's hint runs are recorded
// (runs.jsonl, read by fixtures/scripttest); set for every script, unset
// for the hints' own runs.
const hintsEnv = "AWR_TEST_HINTS"

// A test build run by a script with $AWR_TEST_HINTS set runs the hints
// it printed.
func init() {
	if os.Getenv(hintsEnv) != "" {
		testMain = runAwrCollectingHints
	}
}

// hintTimeout bounds one hint's run; a hint still running then (a rig
// waiting for its agents) parsed and started, which is all it must show.
const hintTimeout = 5 * time.Second

// acceptedPlaceholders are the placeholders a hint may hold: each stands
// for a name only the user can choose (a new directory or file, a new
// seat's role, the text to send), never for an id or key awr knows.
var acceptedPlaceholders = map[string]bool{
	"DIR": true, "NEW_DIR": true, "EMPTY_DIR": true, "FILE": true, "NEW_FILE": true, "EXPORT": true,
	"ROLE": true, "WHAT": true, "NEXT": true, "SOURCE_DIR": true,
}

// transcripts are the commands whose output holds commands that are not
// hints: those awr demo ran on a project of its own, and the shell code
// of a completion script.
var transcripts = map[string]bool{"demo": true, "completion": true}

// hintRun is one hint's run, as recorded for the script's check.
type hintRun struct {
	From     string `json:"from"` // the command line that printed it
	Hint     string `json:"hint"`
	Command  string `json:"command"`
	Exit     int    `json:"exit"`
	Stderr   string `json:"stderr"`
	Problem  string `json:"problem,omitempty"`
	Duration string `json:"duration"`
}

// runAwrCollectingHints is the `awr` of the scripts: run, and the hints
// it printed run too.
func runAwrCollectingHints() int {
	dir := os.Getenv(hintsEnv)
	var stdout, stderr bytes.Buffer
	code := run(os.Args[1:], io.MultiWriter(os.Stdout, &stdout), io.MultiWriter(os.Stderr, &stderr))
	hints := printedHints(stdout.Bytes(), stderr.Bytes())
	if len(hints) == 0 {
		return code
	}
	var cli CLI
	parser, err := kong.New(&cli, kong.Name("awr"), kong.Exit(func(int) {}))
	if err != nil {
		return code
	}
	from := "awr " + strings.Join(os.Args[1:], " ")
	if kctx, err := parser.Parse(os.Args[1:]); err == nil && transcripts[strings.Fields(kctx.Command())[0]] {
		return code
	}
	for _, h := range hints {
		for _, sp := range commandSpans(commandTree(), h) {
			runHint(dir, from, h, h[sp[0]:sp[1]])
		}
	}
	return code
}

// printedHints returns the hints in one command's output.
func printedHints(stdout, stderr []byte) []string {
	var out []string
	for _, b := range [][]byte{stdout, stderr} {
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		if dec.Decode(&v) == nil && !dec.More() {
			out = append(out, jsonHints(v, "")...)
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if m := hintLine.FindStringSubmatch(l); m != nil {
				if strings.HasPrefix(m[1], "(") {
					out = append(out, "awr "+m[2])
				} else {
					out = append(out, m[2])
				}
			}
		}
	}
	return out
}

// jsonHints returns the strings of v under the keys that hold hints.
func jsonHints(v any, key string) []string {
	switch x := v.(type) {
	case map[string]any:
		var out []string
		for k, e := range x {
			if k == "organization" && x["status"] == "preview" {
				// An init preview's organization is the project's after
				// the accept: its next action runs once that has.
				continue
			}
			out = append(out, jsonHints(e, k)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, jsonHints(e, key)...)
		}
		return out
	case string:
		if hintKeys[key] {
			return []string{x}
		}
	}
	return nil
}

// placeholder matches a word that stands for a value: NAME, KEY,
// ROLE@portal, 'WHAT TO SAY' (work keys such as CART-1 and ids hold
// digits; GOALS.md and EXPORT.jsonl are names of files).
var placeholder = lazyre.New(`^([A-Z][A-Z_]+)([@= ].*)?$`)

// shapeRE replaces in a hint what varies from run to run (ids, hashes,
// numbers): what makes a hint a usage error, an unknown command or a
// placeholder is its shape, not its ids. Compiled when first used: this
// build starts an awr process per command of every test script.
var shapeRE = []struct {
	re   *lazyre.Regexp
	with string
}{
	{lazyre.New(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`), "UUID"},
	{lazyre.New(`\b[0-9A-HJKMNP-TV-Z]{26}\b`), "ULID"},
	{lazyre.New(`\b[0-9a-f]{12,64}\b`), "HEX"},
	{lazyre.New(`[0-9]+`), "N"},
}

func shapeOf(command, work string) string {
	s := strings.ReplaceAll(command, work, "$WORK")
	for _, r := range shapeRE {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}

// runHint runs one command in a copy of $WORK and records what happened.
// A hint of a shape already run anywhere in the suite (the same command
// and flags, other ids) is run once: under -race every run is an awr
// process, and the suite prints the same hints in many scripts.
func runHint(dir, from, hint, command string) {
	work := os.Getenv("WORK")
	sum := sha256.Sum256([]byte(shapeOf(command, work)))
	f, err := os.OpenFile(filepath.Join(filepath.Dir(dir), "seen-"+hex.EncodeToString(sum[:8])), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	f.Close()
	rec := hintRun{From: strings.ReplaceAll(from, work, "$WORK"), Hint: hint, Command: command}
	defer func() { record(dir, rec) }()
	cwd, err := os.Getwd()
	chosen := false // holds a name only the user can choose
	for _, w := range shellwords.Split(command) {
		m := placeholder.FindStringSubmatch(w)
		switch {
		case m == nil:
		case acceptedPlaceholders[m[1]]:
			chosen = true
		default:
			rec.Problem = fmt.Sprintf("placeholder %s where awr knows the value", m[1])
			return
		}
	}
	for _, w := range strings.Fields(command) {
		if strings.HasSuffix(w, "_DIR") || strings.HasSuffix(w, "_FILE") || w == "DIR" || w == "FILE" {
			chosen = true
		}
	}
	rel, rerr := filepath.Rel(work, cwd)
	if err != nil || rerr != nil || strings.HasPrefix(rel, "..") {
		rec.Problem = "skipped: the command ran outside $WORK"
		return
	}
	cp, err := os.MkdirTemp(dir, "work-")
	if err != nil {
		rec.Problem = err.Error()
		return
	}
	defer os.RemoveAll(cp)
	if err := copyTree(work, cp); err != nil {
		rec.Problem = "copy $WORK: " + err.Error()
		return
	}
	socket := "awr-hint-" + filepath.Base(cp)
	defer exec.Command("tmux", "-L", socket, "kill-server").Run()
	ctx, cancel := context.WithTimeout(context.Background(), hintTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", strings.ReplaceAll(command, work, cp))
	cmd.Dir = filepath.Join(cp, rel)
	cmd.Stdin = strings.NewReader("")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case hintsEnv, "AWR_TMUX_SOCKET":
			continue
		}
		cmd.Env = append(cmd.Env, strings.ReplaceAll(kv, work, cp))
	}
	cmd.Env = append(cmd.Env, "AWR_TMUX_SOCKET="+socket, "WORK="+cp)
	if os.Getenv("USER") == "" {
		cmd.Env = append(cmd.Env, "USER=tester") // as in a login shell
	}
	start := time.Now()
	err = cmd.Run()
	rec.Duration = time.Since(start).Round(time.Millisecond).String()
	rec.Stderr = strings.ReplaceAll(stderr.String(), cp, "$WORK")
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		rec.Exit = -1 // still running: it parsed and started
	case errors.As(err, &ee):
		rec.Exit = ee.ExitCode()
	case err != nil:
		rec.Problem = err.Error()
		return
	}
	switch {
	case rec.Exit == 2 || strings.Contains(rec.Stderr, "(Usage)"):
		rec.Problem = "usage error"
	case rec.Exit == 126 || rec.Exit == 127:
		rec.Problem = "not a command"
	case strings.Contains(rec.Stderr, "no awr project at") && !chosen:
		rec.Problem = "finds no project"
	}
}

func record(dir string, rec hintRun) {
	b, _ := json.Marshal(rec)
	f, err := os.OpenFile(filepath.Join(dir, "runs.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	f.Write(append(b, '\n'))
}

// copyTree copies the regular files and directories under src into dst
// (sockets, pipes and symlinks are left out).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while copied (a rig's agent at work)
			}
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			info, _ := d.Info()
			mode := fs.FileMode(0o644)
			if info != nil {
				mode = info.Mode().Perm()
			}
			return os.WriteFile(to, b, mode)
		}
		return nil
	})
}
