package mcpserver_test

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/awr-dev/awr/fixtures/testkit"
	"github.com/awr-dev/awr/internal/serve/mcpserver"
)

// TestMain runs the tests, then, after a whole run that passed, fails
// unless every tool's result was validated against its advertised
// outputSchema by some test (call validates every result it gets).
func TestMain(m *testing.M) {
	code := testkit.Run(m)
	if code != 0 || flag.Lookup("test.run").Value.String() != "" || testing.Short() {
		os.Exit(code)
	}
	srv, err := mcpserver.New(mcpserver.Options{Project: os.TempDir(), Version: "test", Now: func() time.Time { return now }})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer srv.Close()
	var missing []string
	for _, tl := range srv.Tools() {
		if _, ok := validated.Load(tl.Name); !ok {
			missing = append(missing, tl.Name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		fmt.Printf("FAIL: no test validated the result of %d tools against their outputSchema: %v\n", len(missing), missing)
		os.Exit(1)
	}
	os.Exit(code)
}
