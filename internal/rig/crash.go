//go:build !awrtest

package rig

// crash is the crash-test hook; a binary built without the awrtest tag
// never honours a crash point.
func (m *Manager) crash(string) {}
