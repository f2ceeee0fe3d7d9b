package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/lab/bench"
	"github.com/stretchr/testify/require"
)

// TestInterruptible_CatchesOnFirstLook: the signal handler is installed
// the first time anything asks the context whether it is done, directly
// or through a derived context, and never after the command returned.
func TestInterruptible_CatchesOnFirstLook(t *testing.T) {
	for name, look := range map[string]func(context.Context){
		"Done":    func(ctx context.Context) { _ = ctx.Done() },
		"Err":     func(ctx context.Context) { _ = ctx.Err() },
		"Derived": func(ctx context.Context) { _, cancel := context.WithTimeout(ctx, time.Hour); cancel() },
	} {
		t.Run(name, func(t *testing.T) {
			ctx, stop := interruptible(io.Discard)
			sc := ctx.(*signalContext)
			require.False(t, sc.installed(), "no handler before anything looks")
			look(ctx)
			require.True(t, sc.installed())
			stop()
			require.Error(t, ctx.Err(), "stopped: cancelled")
		})
	}
	t.Run("NotAfterStop", func(t *testing.T) {
		ctx, stop := interruptible(io.Discard)
		stop()
		<-ctx.Done()
		require.False(t, ctx.(*signalContext).installed())
	})
}

// TestInterruptible_SignalStopsAFollow: a command that waits on its
// context (log --follow) is still stopped cleanly by SIGINT and SIGTERM
// (exit 0, as documented), not killed by the signal.
// Slow: a real follower is signalled twice and waited for.
func TestInterruptible_SignalStopsAFollow(t *testing.T) {
	bin := buildAWR(t)
	proj := filepath.Join(t.TempDir(), "p")
	st, err := bench.NewProject(context.Background(), events.DBPath(proj), 5, 1)
	require.NoError(t, err)
	st.Close()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "log", "--follow", "--since", "1", "--json", "--project", proj)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			defer cmd.Process.Kill()
			// The first event printed: the follow is under way.
			_, err = bufio.NewReader(stdout).ReadString('\n')
			require.NoError(t, err)
			require.NoError(t, cmd.Process.Signal(sig))
			require.NoError(t, cmd.Wait(), "stderr: %s", stderr.String())
			require.Equal(t, 0, cmd.ProcessState.ExitCode())
		})
	}
}
