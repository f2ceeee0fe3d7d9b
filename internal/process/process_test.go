package process_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/awr-dev/awr/internal/process"
	"github.com/stretchr/testify/require"
)

func TestRunning(t *testing.T) {
	t.Parallel()
	me := process.Self()
	require.True(t, process.Running(me), "this process runs")

	other := me
	other.Host = me.Host + "-elsewhere"
	other.PID = 1 << 30
	require.True(t, process.Running(other), "a process on another host counts as running")

	reboot := me
	reboot.BootID = "not-this-boot"
	require.Equal(t, me.BootID == "", process.Running(reboot), "another boot is gone (where boot ids exist)")

	reused := me
	reused.StartTicks = me.StartTicks + 1
	if me.StartTicks != 0 {
		require.False(t, process.Running(reused), "a reused PID is another process")
	}

	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	gone := me
	gone.PID, gone.StartTicks = cmd.Process.Pid, 0
	require.False(t, process.Running(gone), "an exited process is gone")
}

// TestOutput_ReadWhileWritten: a child's output is read while its copier
// writes it (under -race, an unlocked buffer fails here), and keeps every
// byte written.
func TestOutput_ReadWhileWritten(t *testing.T) {
	t.Parallel()
	var out process.Output
	cmd := exec.Command("sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo line $i; done")
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	for range 100 {
		_ = out.String()
	}
	require.NoError(t, cmd.Wait())
	require.Equal(t, 8, strings.Count(out.String(), "line "))
}

// TestRun: Run returns a command's stdout; a failure's error is its
// stderr, trimmed, or the run's own error when it wrote none, with the
// stdout written so far.
func TestRun(t *testing.T) {
	t.Parallel()
	out, err := process.Run(exec.Command("sh", "-c", "echo out"))
	require.NoError(t, err)
	require.Equal(t, "out\n", string(out))
	out, err = process.Run(exec.Command("sh", "-c", "echo partial; echo '  what went wrong  ' >&2; exit 3"))
	require.EqualError(t, err, "what went wrong")
	require.Equal(t, "partial\n", string(out))
	_, err = process.Run(exec.Command("sh", "-c", "exit 4"))
	require.EqualError(t, err, "exit status 4")
}
