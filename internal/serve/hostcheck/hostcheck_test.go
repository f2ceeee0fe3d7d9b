package hostcheck_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/awr-dev/awr/internal/serve/hostcheck"
)

// TestAllowed: the Host values each kind of address answers, the port
// left out only where a browser leaves it out (80).
func TestAllowed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr string
		want []string
	}{
		{"127.0.0.1:7400", []string{"127.0.0.1:7400", "[::1]:7400", "localhost:7400"}},
		{"LOCALHOST:7400", []string{"localhost:7400"}}, // a name is compared as given, lower case; only "localhost" is loopback
		{"localhost:7400", []string{"127.0.0.1:7400", "[::1]:7400", "localhost:7400"}},
		{"[::1]:9", []string{"127.0.0.1:9", "[::1]:9", "localhost:9"}},
		{"10.1.2.3:7400", []string{"10.1.2.3:7400"}},
		{"127.0.0.1:80", []string{"127.0.0.1", "127.0.0.1:80", "[::1]", "[::1]:80", "localhost", "localhost:80"}},
		{"10.1.2.3:80", []string{"10.1.2.3", "10.1.2.3:80"}},
		{"Not-An-Address", []string{"not-an-address"}},
	} {
		got := slices.Sorted(maps.Keys(hostcheck.Allowed(c.addr)))
		require.Equal(t, c.want, got, c.addr)
	}
}

// TestLoopback: localhost and loopback IPs are loopback; names and other
// addresses are not.
func TestLoopback(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{"localhost": true, "127.0.0.1": true, "127.9.9.9": true, "::1": true, "10.0.0.1": false, "example.invalid": false, "": false, "0.0.0.0": false} {
		require.Equal(t, want, hostcheck.Loopback(host), host)
	}
	require.True(t, hostcheck.LoopbackAddr("127.0.0.1:80"))
	require.True(t, hostcheck.LoopbackAddr("[::1]:80"))
	require.True(t, hostcheck.LoopbackAddr("localhost"))
	require.False(t, hostcheck.LoopbackAddr("10.0.0.1:80"))
}
