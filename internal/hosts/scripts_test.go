package hosts_test

import (
	"testing"

	"github.com/awr-dev/awr/fixtures/scripttest"
	"github.com/awr-dev/awr/fixtures/testkit"
)

// TestMain runs the tests with the kit's parallelism and removes the
// programs it built.
func TestMain(m *testing.M) { testkit.Run(m) }

// TestScripts runs the scripts of the hosts' hooks and client install (testdata/script/*.txtar)
// against the real awr binary, and every hint they print
// (fixtures/scripttest): they live here, beside the code they drive, so
// that go test runs them beside the CLI's own.
// Slow: every script command is an awr process.
func TestScripts(t *testing.T) { scripttest.Scripts(t, nil) }
