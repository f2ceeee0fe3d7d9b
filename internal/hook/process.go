package hook

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/awr-dev/awr/events"
)

// hostProcess returns the host process that ran this hook, nil when it
// cannot be read. A variable so that a test may give another process
// (export_test.go); nothing else sets it.
var hostProcess = func() *events.HostProcess {
	if runtime.GOOS != "linux" {
		return nil
	}
	return readHostProcess("/proc", os.Getpid())
}

// maxAncestors bounds how far up readHostProcess looks for the host past
// the shells that ran the hook's command; statLimit, how much of a stat
// file it reads (one line, well under it).
const (
	maxAncestors = 4
	statLimit    = 1024
)

// shells are the programs a host may run a hook's command line with:
// never the host itself.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"ash": true, "busybox": true, "fish": true, "csh": true, "tcsh": true,
}

// readHostProcess returns the nearest ancestor of process pid that is not
// a shell, read from the proc file system at root: its pid and its start
// time, so that a reused pid never matches. nil when a stat file cannot
// be read or parsed, when the chain ends, or past maxAncestors: no
// identity, and so no tie. It only reads a few small files.
func readHostProcess(root string, pid int) *events.HostProcess {
	_, ppid, _, ok := readStat(root, pid)
	if !ok {
		return nil
	}
	for range maxAncestors {
		if ppid <= 0 {
			return nil
		}
		comm, next, start, ok := readStat(root, ppid)
		if !ok {
			return nil
		}
		if !shells[comm] {
			return &events.HostProcess{PID: ppid, Start: start}
		}
		ppid = next
	}
	return nil
}

// readStat reads /proc/PID/stat under root: the command name, the parent
// pid and the start time (fields 2, 4 and 22).
func readStat(root string, pid int) (comm string, ppid int, start int64, ok bool) {
	f, err := os.Open(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", 0, 0, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, statLimit))
	if err != nil {
		return "", 0, 0, false
	}
	// "PID (COMM) STATE PPID ...": the name may hold spaces and
	// parentheses; the last ")" ends it.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return "", 0, 0, false
	}
	rest := bytes.Fields(b[end+1:])
	if len(rest) < 20 {
		return "", 0, 0, false
	}
	ppid, err = strconv.Atoi(string(rest[1]))
	if err != nil {
		return "", 0, 0, false
	}
	start, err = strconv.ParseInt(string(rest[19]), 10, 64)
	if err != nil {
		return "", 0, 0, false
	}
	return string(b[open+1 : end]), ppid, start, true
}
