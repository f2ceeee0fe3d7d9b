//go:build !linux

package storehold

import (
	"net"
	"time"
)

// unacked bounds how long what the holder sent on c may stay
// unacknowledged: where TCP_USER_TIMEOUT is missing, only the keepalive
// probes of the holder's dialer bound a silent link.
func unacked(c net.Conn, d time.Duration) error { return nil }

// unackedOf returns c's TCP_USER_TIMEOUT, for tests: none here.
func unackedOf(c net.Conn) (time.Duration, error) { return 0, nil }
