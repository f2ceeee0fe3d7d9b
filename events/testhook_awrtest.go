//go:build awrtest

package events

import "os"

// verifyPayloadsOn reports whether the payload check runs: in a binary
// built with the awrtest tag, also when AWR_VERIFY_PAYLOADS=1.
func verifyPayloadsOn() bool {
	return verifyPayloads.Load() || os.Getenv("AWR_VERIFY_PAYLOADS") == "1"
}
