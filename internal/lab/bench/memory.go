package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/awr-dev/awr/internal/fault"
)

// MemoryFigure is one awr command run as a child process with its wall
// time and its peak resident set size (the child's ru_maxrss): the memory
// a long job (a replay, an export, an import, a generated history, the web
// page) needs, which must not grow with the log (issue #44).
type MemoryFigure struct {
	Name string `json:"name"`
	// Command is what ran, as a person would type it.
	Command    string  `json:"command"`
	Seconds    float64 `json:"seconds"`
	PeakRSSMiB float64 `json:"peak_rss_mib"`
}

// memoryGenerateEvents is how many events the memory run's `bench
// generate` appends, to a copy of the project.
const memoryGenerateEvents = 2000

// uiWalk is what the memory run reads from `awr ui`: every part of the
// page, the verification and the export of the whole log included, and
// the pages of sessions the state panel reads (the first comes with the
// state).
var uiWalk = []string{"api/head", "api/status", "api/kinds", "api/histogram", "api/lanes", "api/log", "api/state", "api/sessions?limit=200", "api/lanes?by=agent&buckets=1&limit=200", "api/search?q=step", "api/verify", "api/export"}

// memory runs each long job once as a child process (RunOptions.Memory)
// and records its time and peak RSS: replay, replay --verify, export,
// import of that export into a new project, bench generate on a copy of
// the project, and awr ui while every part of its page is read. What it
// writes goes to a temporary directory, removed afterwards; the replay
// rebuilds the project's projections in place, as the in-process replay
// does.
func (m *measurer) memory() error {
	if m.opts.Progress != nil {
		m.opts.Progress("memory")
	}
	tmp, err := os.MkdirTemp("", "awr-bench-memory-")
	if err != nil {
		return fault.Wrap(fault.Storage, err, "bench run: memory: temporary directory")
	}
	defer os.RemoveAll(tmp)
	dir := m.p.Dir()
	export := filepath.Join(tmp, "log.jsonl")
	gen := filepath.Join(tmp, "generated")
	if err := copyProject(dir, gen); err != nil {
		return fault.Wrap(fault.Storage, err, "bench run: memory: copy the project for bench generate")
	}
	jobs := []struct {
		name string
		args []string
	}{
		{"replay", []string{"--project", dir, "replay", "--json"}},
		{"replay --verify", []string{"--project", dir, "replay", "--verify", "--json"}},
		{"export", []string{"--project", dir, "export", "--output", export, "--json"}},
		{"import", []string{"--project", filepath.Join(tmp, "imported"), "import", export, "--json"}},
		{"bench generate", []string{"--project", gen, "bench", "generate", "--events", strconv.Itoa(memoryGenerateEvents), "--json"}},
	}
	for _, j := range jobs {
		f, err := m.measureChild(j.name, j.args)
		if err != nil {
			return err
		}
		m.res.Memory = append(m.res.Memory, f)
	}
	f, err := m.measureUI(dir)
	if err != nil {
		return err
	}
	m.res.Memory = append(m.res.Memory, f)
	return nil
}

// measureChild runs awr with args to its end.
func (m *measurer) measureChild(name string, args []string) (MemoryFigure, error) {
	var stderr bytes.Buffer
	cmd := awrCommand(m.ctx, m.opts.Exe, args, nil, &stderr)
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return MemoryFigure{}, fmt.Errorf("bench run: memory: %w", childError("awr", args, err, &stderr))
	}
	return figure(name, args, time.Since(t0), cmd.ProcessState), nil
}

// measureUI starts awr ui on dir, reads every part of its page in turn
// (uiWalk), then stops it; Seconds is the walk's time.
func (m *measurer) measureUI(dir string) (MemoryFigure, error) {
	args := []string{"--project", dir, "ui", "--listen", "127.0.0.1:0", "--json"}
	fail := func(err error) (MemoryFigure, error) {
		return MemoryFigure{}, fmt.Errorf("bench run: memory: awr %s: %w", strings.Join(args, " "), err)
	}
	cmd := exec.CommandContext(m.ctx, m.opts.Exe, args...)
	cmd.Args[0] = "awr"
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return fail(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	// The first line is {"url": ..., "project": ...}.
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		return fail(fmt.Errorf("no URL on stdout: %v: %s", err, strings.TrimSpace(stderr.String())))
	}
	var started struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(line, &started); err != nil || started.URL == "" {
		return fail(fmt.Errorf("no URL on stdout: %q", line))
	}
	client := &http.Client{Timeout: 10 * time.Minute}
	t0 := time.Now()
	for _, path := range uiWalk {
		resp, err := client.Get(strings.TrimSuffix(started.URL, "/") + "/" + path)
		if err != nil {
			return fail(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return fail(err)
		}
		if resp.StatusCode != http.StatusOK {
			return fail(fmt.Errorf("GET /%s: %s", path, resp.Status))
		}
	}
	took := time.Since(t0)
	stopped = true
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		return fail(fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String())))
	}
	return figure("ui (every part of the page read)", args, took, cmd.ProcessState), nil
}

// figure is the MemoryFigure of a child that ended.
func figure(name string, args []string, took time.Duration, ps *os.ProcessState) MemoryFigure {
	f := MemoryFigure{Name: name, Command: "awr " + strings.Join(args, " "), Seconds: math.Round(took.Seconds()*100) / 100}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		// Linux reports ru_maxrss in KiB.
		f.PeakRSSMiB = math.Round(float64(ru.Maxrss)/1024*10) / 10
	}
	return f
}

// copyProject copies the project at dir (its files and its .awr/, but
// not SQLite's shared-memory index, which the copy makes anew) into to.
// Nothing may write the project meanwhile: the run's own session has
// ended.
func copyProject(dir, to string) error {
	return filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		switch {
		case d.IsDir():
			if rel == ".git" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o700)
		case !d.Type().IsRegular() || strings.HasSuffix(path, "-shm"):
			return nil
		}
		return copyFile(path, target)
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
