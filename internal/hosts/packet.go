package hosts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/awr-dev/awr/internal/lazyre"
)

// What a hook gives a conversation that already holds a packet: the
// hosts keep every context a hook injected in the conversation, so a
// resumed (or forked) conversation still holds the packet it was given,
// and a second copy would leave two states of the work side by side, one
// of them stale. awr records, with each packet it gives, a digest of each
// of its lines; a later start of the same conversation sends only the
// lines that changed (a packet update), or nothing when none did.

// revisionLine starts the packet's line that changes with every event; it
// is left out of the digests and the updates (the update says the
// revision in its header).
const revisionLine = "As of project_revision "

// lineDigest identifies one line of a packet: 12 hex digits of its
// SHA-256, enough to tell a packet's few hundred lines apart.
func lineDigest(line string) string {
	sum := sha256.Sum256([]byte(line))
	return hex.EncodeToString(sum[:6])
}

// PacketLines returns the lines of a rendered packet that count for an
// update, with their digests.
func PacketLines(text string) (lines, digests []string) {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, revisionLine) {
			continue
		}
		lines = append(lines, l)
		digests = append(digests, lineDigest(l))
	}
	return lines, digests
}

// PacketUpdate returns the lines of the new packet whose digest the held
// packet lacks, each under its section's heading, and how many of the
// held packet's lines the new one no longer has. Both are empty when
// nothing changed.
func PacketUpdate(held []string, lines, digests []string) (added []string, gone int) {
	had := map[string]int{}
	for _, d := range held {
		had[d]++
	}
	now := map[string]int{}
	for _, d := range digests {
		now[d]++
	}
	for d, n := range had {
		if n > now[d] {
			gone += n - now[d]
		}
	}
	section, shown := "", ""
	for i, l := range lines {
		if strings.HasPrefix(l, "#") {
			section = l
		}
		if had[digests[i]] > 0 {
			had[digests[i]]--
			continue
		}
		if section != "" && section != l && shown != section {
			added = append(added, section)
		}
		shown = section
		added = append(added, l)
	}
	return added, gone
}

// conversationMarkRE finds the conversation awr named in the texts it gave
// a conversation (orientation and packet both say "This conversation
// (HOST:ID)"), as a host's transcript keeps them.
var conversationMarkRE = lazyre.New(`This conversation \((claude|codex|gemini|opencode):([A-Za-z0-9._-]{1,200})\)`)

// transcriptTail bounds how much of a host's transcript a hook reads: its
// end, where the latest texts awr gave are.
const transcriptTail = 8 << 20

// ForkOrigin returns the keys of the conversations awr named in the
// transcript at path, latest first, leaving out self: a forked
// conversation's transcript is a copy of its original's, awr's texts
// included. It reads at most the last transcriptTail bytes of a regular
// file and returns nothing for anything else.
func ForkOrigin(path, self string) []string {
	data, ok := transcript(path)
	if !ok {
		return nil
	}
	return namedIn(data, self)
}

// namedIn returns the keys of the conversations awr named in data, latest
// first, leaving out self.
func namedIn(data []byte, self string) []string {
	var keys []string
	seen := map[string]bool{self: true}
	ms := conversationMarkRE.Regexp().FindAllSubmatch(data, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		key := string(ms[i][1]) + ":" + string(ms[i][2])
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	return keys
}

// PacketMark names a packet in the texts awr gives a conversation:
// "packet " and the first 12 hex digits of its context hash. Every packet
// and packet update carries the mark of the packet the conversation holds
// once it has read it, so a host's transcript tells which of them the
// conversation really kept. It holds no character JSON escapes: a
// transcript keeps it as it is.
func PacketMark(contextHash string) string {
	h := strings.TrimPrefix(contextHash, "sha256:")
	if len(h) > 12 {
		h = h[:12]
	}
	return "packet " + h
}

// TranscriptHolds returns the index of the first of marks (newest first)
// that the transcript at path holds, -1 when it holds none; read is false
// when there is no transcript to read (no path, not a regular file, not
// readable), and the caller must go by what it recorded. A host killed
// mid-turn may never write the turn that carried awr's latest text, and
// its resumed conversation then holds only what it did write. It reads at
// most the last transcriptTail bytes.
func TranscriptHolds(path string, marks []string) (index int, read bool) {
	data, ok := transcript(path)
	if !ok {
		return -1, false
	}
	return holds(data, marks), true
}

// Holds is TranscriptHolds for the conversation of event e: an OpenCode
// fork's ForkContext, which holds awr's texts the fork holds, stands for
// its transcript.
func Holds(e Event, marks []string) (index int, read bool) {
	if e.ForkContext != "" {
		return holds([]byte(e.ForkContext), marks), true
	}
	return TranscriptHolds(e.TranscriptPath, marks)
}

// recordingMessages starts a Gemini CLI chat recording's record that
// sets the conversation's messages whole: at a start or a resume, and
// after a compression (the compressed history). What follows the last one
// is what the conversation holds now; what precedes it, what it held.
var recordingMessages = []byte(`{"$set":{"messages":`)

// RecordingHolds is TranscriptHolds for Gemini CLI's chat recording (a
// JSON-lines file of messages and of records that set them whole): it
// searches the messages the conversation holds now, from the last record
// that set them whole, and prompt, the prompt being sent (which carries
// what the prompt's SessionStart gave).
func RecordingHolds(path, prompt string, marks []string) (index int, read bool) {
	data, ok := transcript(path)
	if !ok {
		return -1, false
	}
	if i := bytes.LastIndex(data, recordingMessages); i >= 0 {
		data = data[i:]
	}
	return holds(append(data, prompt...), marks), true
}

func holds(data []byte, marks []string) int {
	for i, m := range marks {
		if m != "" && bytes.Contains(data, []byte(m)) {
			return i
		}
	}
	return -1
}

// transcript reads the end of the host's transcript at path: at most
// transcriptTail bytes of a regular file; ok is false for anything else.
func transcript(path string) (data []byte, ok bool) {
	if path == "" {
		return nil, false
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if fi.Size() > transcriptTail {
		if _, err := f.Seek(fi.Size()-transcriptTail, io.SeekStart); err != nil {
			return nil, false
		}
	}
	data, err = io.ReadAll(io.LimitReader(f, transcriptTail))
	return data, err == nil
}

// UnsavedSummary says in a few words what changed: "2 files changed since
// checkpoint C (a.go, b.go)".
func UnsavedSummary(since string, files []string) string {
	var b bytes.Buffer
	switch len(files) {
	case 0:
		fmt.Fprintf(&b, "the repository changed since %s", since)
	case 1:
		fmt.Fprintf(&b, "1 file changed since %s (%s)", since, files[0])
	default:
		shown := files
		if len(shown) > 3 {
			shown = shown[:3]
		}
		fmt.Fprintf(&b, "%d files changed since %s (%s", len(files), since, strings.Join(shown, ", "))
		if len(files) > 3 {
			fmt.Fprintf(&b, " and %d more", len(files)-3)
		}
		b.WriteString(")")
	}
	return b.String()
}

// rolloutHead bounds how much of the start of a Codex rollout
// RolloutForkedFrom reads: its first line, the session's meta, holds the
// base instructions (about 20 KiB).
const rolloutHead = 256 << 10

// forkedFromRE finds the thread a Codex rollout's session_meta says it was
// forked from.
var forkedFromRE = lazyre.New(`"forked_from_id":"([0-9A-Za-z._-]{1,200})"`)

// RolloutForkedFrom returns the forked_from_id of the Codex rollout at path
// (a fork's session_meta names the thread it copied), or "": it reads at
// most the first rolloutHead bytes of a regular file, the first line only.
func RolloutForkedFrom(path string) string {
	if path == "" {
		return ""
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, rolloutHead))
	if i := bytes.IndexByte(head, '\n'); i >= 0 {
		head = head[:i]
	}
	if m := forkedFromRE.Regexp().FindSubmatch(head); m != nil {
		return string(m[1])
	}
	return ""
}

// ancestorDepth bounds how far up from the hook process ancestorArgs
// looks for the host: the host runs the hook through a shell.
const ancestorDepth = 4

// cmdlineMax bounds the command line read of one process.
const cmdlineMax = 64 << 10

// ancestorArgs returns the command lines of the hook's parent processes,
// nearest first, as Linux's /proc shows them (nothing elsewhere): each
// read is bounded, from the kernel's own files.
func ancestorArgs() [][]string {
	var out [][]string
	pid := os.Getppid()
	for range ancestorDepth {
		if pid <= 1 {
			break
		}
		f, err := os.Open(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			break
		}
		data, _ := io.ReadAll(io.LimitReader(f, cmdlineMax))
		f.Close()
		out = append(out, strings.Split(strings.TrimRight(string(data), "\x00"), "\x00"))
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || len(stat) > cmdlineMax {
			break
		}
		// pid (comm) state ppid ...: comm may hold blanks; read after it.
		rest := string(stat)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			break
		}
		if _, err := fmt.Sscan(fields[1], &pid); err != nil {
			break
		}
	}
	return out
}

// ForkSources returns the keys of the conversations the conversation of
// e, a fork, may come from, most likely first: for Claude Code the one
// its host's command line forks (`--resume ID --fork-session`), for Codex
// the one its command line forks (`codex exec fork ID`) and the one its
// rollout names (RolloutForkedFrom), then
// those awr named in its transcript, or, for OpenCode, in the texts of
// awr's its copied messages hold (ForkContext). self, its own key, is
// left out.
func ForkSources(e Event, self string) []string {
	var keys []string
	switch e.Host {
	case Claude:
		for _, args := range ancestorArgs() {
			if id := ForkedFrom(args); id != "" {
				keys = append(keys, string(e.Host)+":"+id)
				break
			}
		}
	case Codex:
		for _, args := range ancestorArgs() {
			if id := CodexForkedFrom(args); id != "" {
				keys = append(keys, string(e.Host)+":"+id)
				break
			}
		}
		if id := RolloutForkedFrom(e.TranscriptPath); id != "" {
			keys = append(keys, string(e.Host)+":"+id)
		}
	}
	if e.ForkContext != "" {
		return append(keys, namedIn([]byte(e.ForkContext), self)...)
	}
	return append(keys, ForkOrigin(e.TranscriptPath, self)...)
}
