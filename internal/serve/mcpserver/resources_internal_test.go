package mcpserver

import (
	"testing"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/stretchr/testify/require"
)

func TestPacketRequest(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		in, err := packetRequest(SessionContextURI("01ABC"))
		require.NoError(t, err)
		require.Equal(t, "01ABC", in.Session)
		require.Empty(t, in.Work)
		in, err = packetRequest(WorkContextURI("ops/A 1"))
		require.NoError(t, err)
		require.Equal(t, "awr://work/ops%2FA%201/context", WorkContextURI("ops/A 1"))
		require.Equal(t, "ops/A 1", in.Work)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, uri := range []string{"awr://session//context", "awr://work/A/B/context", "awr://work/A", "awr://work/%zz/context", "awr://seat/x/context", "awr://work/%20/context"} {
			_, err := packetRequest(uri)
			require.Equal(t, fault.NotFound, fault.CodeOf(err), uri)
		}
	})
}
