package rig

import (
	"os"
	"os/exec"
	"path/filepath"
)

// SiblingAwr is the awr executable beside the running one (awr-mcp ships
// next to awr), else the one on PATH, else "" (agents then find awr on
// their own PATH).
func SiblingAwr() string {
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "awr"); p != exe {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				return p
			}
		}
	}
	if p, err := exec.LookPath("awr"); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return abs
		}
	}
	return ""
}
