// Command awr keeps coding agents' work continuous across interruptions:
// an event-sourced log of sessions, claims, checkpoints and bindings per
// project, with replay, verification and reads at any past revision.
package main

import "os"

func main() {
	leaveAtExit = true
	os.Exit(testMain())
}
