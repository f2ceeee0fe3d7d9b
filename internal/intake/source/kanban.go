package source

import (
	"sort"
	"strings"

	"github.com/awr-dev/awr/internal/lazyre"
)

// ObsidianKanban is the adapter of an Obsidian Kanban board: Markdown with
// `kanban-plugin: basic` (or board) front matter.
const ObsidianKanban = "obsidian_kanban"

func init() { register(ObsidianKanban, parseKanban) }

// kanbanFrontMatter recognizes a board by its front matter.
var kanbanFrontMatter = lazyre.New(`(?m)\A\s*---\s*\n(?:.*\n)*?\s*kanban-plugin:\s*\S+`)

// IsKanban reports whether content is an Obsidian Kanban board.
func IsKanban(content []byte) bool {
	if len(content) > 4096 {
		content = content[:4096]
	}
	return kanbanFrontMatter.Match(content)
}

// kanbanLanes are lane names that say where a card stands.
var kanbanLanes = map[string]string{
	"doing": "in_progress", "in progress": "in_progress", "wip": "in_progress", "working": "in_progress",
	"in review": "in_progress", "review": "in_progress",
	"blocked": "blocked", "waiting": "blocked", "on hold": "blocked",
	"done": "completed", "complete": "completed", "completed": "completed", "archive": "completed",
}

// kanbanLaneWords are kanbanLanes' names, longest first, so that a lane
// named by two of them takes the longer.
var kanbanLaneWords = func() []string {
	var ws []string
	for w := range kanbanLanes {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool {
		if len(ws[i]) != len(ws[j]) {
			return len(ws[i]) > len(ws[j])
		}
		return ws[i] < ws[j]
	})
	return ws
}()

// parseKanban is the obsidian_kanban adapter. Each `## Lane` is a Group
// and each card (`- [ ] text`) an item, keyed as markdown_todo keys
// checklist items ("card-" and a hash of its text, or the KEY it opens
// with). A ticked card is completed; an unticked one takes its lane's
// status when the lane's name (its first words, before any emoji or
// count) says one — Doing, In Progress, Review, Waiting, Blocked, Done,
// Complete, Archive — and is planned otherwise. A card's nested
// checkboxes are its parts (Parent), and the card depends on them. The
// plugin's %% kanban:settings %% block is not read.
func parseKanban(path string, content []byte, opts Options) Result {
	return readChecklist(path, content, opts, "card", func(heading string) (string, string) {
		if s := laneStatus(heading); s != "" {
			return heading, s
		}
		return heading, "planned"
	})
}

// laneWords is the words of a lane name, without emoji or counts.
var laneWords = lazyre.New(`[\pL][\pL ]*`)

// laneStatus is the status a lane's name says, "" for none: the name's
// first words, before any emoji or count, are a lane word or open or end
// with one.
func laneStatus(heading string) string {
	name := strings.ToLower(strings.TrimSpace(laneWords.FindString(heading)))
	if s, ok := kanbanLanes[name]; ok {
		return s
	}
	for _, w := range kanbanLaneWords {
		if strings.HasPrefix(name, w+" ") || strings.HasSuffix(name, " "+w) {
			return kanbanLanes[w]
		}
	}
	return ""
}
