package hosts

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"strings"
	"text/template"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/shellwords"
)

// OpenCode runs no hook commands: it loads plugins, JavaScript modules in
// .opencode/plugins/ (project) or ~/.config/opencode/plugins/ (user).
// awr's install writes one (PluginFile) that hands each of OpenCode's
// session moments to `awr client hook --client opencode` as the hook
// payload the other hosts send, and adds the context awr answers to the
// user's message; awr's hook logic decides everything, the plugin only
// carries. The file is awr's whole: uninstall removes it (or gives back
// the file that was there before, byte for byte).

// PluginFile is the name of awr's OpenCode plugin.
const PluginFile = "awr.js"

// pluginHeader starts awr's plugin file: IsPlugin knows it by it.
const pluginHeader = "// awr plugin for OpenCode: written by `awr client install --client opencode`,\n"

//go:embed opencode_plugin.js.tmpl
var pluginSource string

var pluginTemplate = template.Must(template.New("opencode").Parse(pluginSource))

// IsPlugin reports whether data is awr's OpenCode plugin.
func IsPlugin(data []byte) bool { return bytes.HasPrefix(data, []byte(pluginHeader)) }

// Plugin returns awr's OpenCode plugin running command (awr's hook command
// line, as IsAwrCommand takes it): its words as the shell would split
// them, leading VAR=value assignments becoming the environment awr runs
// with; the plugin starts it without a shell.
func Plugin(command string) []byte {
	words := shellwords.Command(command)
	env := map[string]string{}
	for len(words) > 0 && isAssignment(words[0]) {
		k, v, _ := strings.Cut(words[0], "=")
		env[k] = v
		words = words[1:]
	}
	argv, _ := json.Marshal(words) // strings only: cannot fail
	envJSON, _ := json.Marshal(env)
	s, _ := specOf(OpenCode, SessionStart)
	var b bytes.Buffer
	_ = pluginTemplate.Execute(&b, struct {
		Command, Argv, Env string
		TimeoutMs          int
	}{command, string(argv), string(envJSON), s.timeout * 1000}) // a fixed template over strings: cannot fail
	return b.Bytes()
}

// installPlugin is Install for OpenCode: the plugin, over nothing or over
// an earlier awr plugin; a file awr did not write is refused.
func installPlugin(op string, existing []byte, command string) ([]byte, error) {
	if len(bytes.TrimSpace(existing)) > 0 && !IsPlugin(existing) {
		return nil, fault.Wrap(fault.InvalidInput, ErrSettingsShape, "%s: the file is not awr's OpenCode plugin; move it away, then install again", op).
			With("path", PluginFile)
	}
	out := Plugin(command)
	if bytes.Equal(out, existing) {
		return existing, nil
	}
	return out, nil
}
