package hook

import (
	"testing"

	"github.com/awr-dev/awr/events"
)

// SetHostProcess makes the hooks answered during t see proc as the host
// process that ran them (nil: none could be read), until t ends. Tests
// that call it must not run in parallel.
func SetHostProcess(t testing.TB, proc func() *events.HostProcess) {
	old := hostProcess
	hostProcess = proc
	t.Cleanup(func() { hostProcess = old })
}

// ReadHostProcess is readHostProcess, for its tests.
var ReadHostProcess = readHostProcess
