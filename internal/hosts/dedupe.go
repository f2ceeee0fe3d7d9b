package hosts

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Key identifies one occurrence of a hook event, so that a delivery seen
// twice is recorded once. Two deliveries get the same key when they come from
// the same host and conversation, name the same event, and carry the same
// occurrence id and the same distinguishing value (source, trigger, reason,
// stop_hook_active). The occurrence id is Codex's turn_id, Claude's
// prompt_id, or Gemini's per-event timestamp.
//
// Codex runs every matching hook of every settings file, concurrently, so a
// hook installed at both scopes is delivered twice with identical payloads;
// Gemini sends one timestamp to all hooks of an event. Claude sends no
// occurrence id on SessionStart before the first prompt and may send the same
// prompt_id for two compactions of one prompt: callers that must tell those
// apart should also bound a key's life (for example to a few seconds).
//
// The key is "hook:" followed by the hex SHA-256 of the fields.
func (e Event) Key() string {
	occurrence := e.TurnID
	if occurrence == "" {
		occurrence = e.Timestamp
	}
	h := sha256.New()
	for _, f := range []string{
		string(e.Host), e.ConversationID, string(e.Name), occurrence,
		e.Source, e.Trigger, e.Reason, strconv.FormatBool(e.StopHookActive),
	} {
		h.Write([]byte(strconv.Itoa(len(f))))
		h.Write([]byte{':'})
		h.Write([]byte(f))
	}
	return "hook:" + hex.EncodeToString(h.Sum(nil))
}
