package replay_test

import (
	"testing"

	"github.com/awr-dev/awr/fixtures/scripttest"
)

// TestScripts runs the scripts of export, import, replicas and fork
// (testdata/script/*.txtar) against the real awr binary, and every hint
// they print (fixtures/scripttest): they live here, beside the code they
// drive, so that go test runs them beside the CLI's own.
// Slow: every script command is an awr process.
func TestScripts(t *testing.T) { scripttest.Scripts(t, nil) }
