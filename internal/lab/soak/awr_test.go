package soak

import (
	"testing"

	"github.com/awr-dev/awr/fixtures/testkit"
)

// awrBinary returns the path of the awr binary the process tests run,
// built once per test binary (fixtures/testkit) into a directory every
// user may enter, so the read-only tests can run it as nobody.
func awrBinary(t *testing.T) string {
	t.Helper()
	return testkit.Program(t, testkit.AWR)
}
