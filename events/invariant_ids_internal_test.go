package events

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Only a ULID in canonical form has a key, and its key gives it back.
func TestULIDOf(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"01ARZ3NDEKTSV4RRFFQ69G5FAV", "00000000000000000000000000", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01KBX5ZZKBKACTAV9WEVGEMMVR"} {
		k, ok := ulidOf(id)
		require.True(t, ok, id)
		require.Equal(t, id, k.String())
	}
	for _, id := range []string{"", "A", "01arz3ndektsv4rrffq69g5fav", "81ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FAI", "01ARZ3NDEKTSV4RRFFQ69G5FA", "01ARZ3NDEKTSV4RRFFQ69G5FAVX"} {
		_, ok := ulidOf(id)
		require.False(t, ok, id)
	}
	a, _ := ulidOf("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	b, _ := ulidOf("01ARZ3NDEKTSV4RRFFQ69G5FAW")
	require.NotEqual(t, a, b)
	x := newIDIndex()
	x.add("01ARZ3NDEKTSV4RRFFQ69G5FAV", 0)
	x.add("01arz3ndektsv4rrffq69g5fav", 1)
	i, ok := x.find("01ARZ3NDEKTSV4RRFFQ69G5FAV")
	require.True(t, ok)
	require.Equal(t, int32(0), i)
	i, ok = x.find("01arz3ndektsv4rrffq69g5fav")
	require.True(t, ok)
	require.Equal(t, int32(1), i)
	require.Equal(t, "01arz3ndektsv4rrffq69g5fav", x.id(1))
	require.Equal(t, "01ARZ3NDEKTSV4RRFFQ69G5FAV", x.id(0))
}
