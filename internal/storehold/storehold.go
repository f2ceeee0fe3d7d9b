package storehold

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// EnvOff is the environment variable that turns the holder off: with
// AWR_STORE_HOLD=off every command connects to the store itself.
const EnvOff = "AWR_STORE_HOLD"

// EnvURL carries the store's URL to the holder process Start runs (never
// on its command line).
const EnvURL = "AWR_STORE_HOLD_URL"

// Command is the hidden awr command that runs the holder (Start runs the
// awr binary with it).
const Command = "__hold-store"

// Port is the port in the name of the holder's socket
// (DIR/.s.PGSQL.5432), as a PostgreSQL client derives it from a socket
// directory and a port.
const Port = 5432

// socketName is the socket's name in the holder's directory.
const socketName = ".s.PGSQL.5432"

// maxSocketPath is the longest socket path used: sun_path holds 108 bytes
// on Linux and 104 on the BSDs.
const maxSocketPath = 100

// Dir returns the holder's directory for the store at url, as this
// process reaches it ($XDG_RUNTIME_DIR/awr-UID/store-HASH, or under
// /tmp): the URL, every PG* environment variable (a password, a service
// file) and the content of the files credentials are read from (the
// password file, the service file, the client's certificate and key: see
// credentialFiles) name the holder, so that a command that would connect
// differently, or with another password, never uses another's
// connections. It returns "" when the holder is off (AWR_STORE_HOLD=off)
// or the socket's path would be too long.
func Dir(url string) string {
	if strings.EqualFold(os.Getenv(EnvOff), "off") || url == "" {
		return ""
	}
	// The user's runtime directory, else /tmp (as tmux does), never
	// TMPDIR: a holder outlives the command, and a temporary directory
	// may be removed under it.
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base == "" || !filepath.IsAbs(base) {
		base = "/tmp"
	}
	h := sha256.New()
	h.Write([]byte(url))
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		if strings.HasPrefix(kv, "PG") {
			h.Write([]byte{0})
			h.Write([]byte(kv))
		}
	}
	// The files a connection takes its credentials from, by content: a
	// holder keeps the password and keys it read when it started, so a
	// changed ~/.pgpass (another password) names another holder.
	for _, f := range credentialFiles(url) {
		h.Write([]byte{0})
		h.Write([]byte(f))
		h.Write([]byte{0})
		h.Write(fileSum(f))
	}
	dir := filepath.Join(base, fmt.Sprintf("awr-%d", os.Getuid()), "store-"+hex.EncodeToString(h.Sum(nil)[:8]))
	if len(filepath.Join(dir, socketName)) > maxSocketPath {
		return ""
	}
	return dir
}

// Private reports whether dir and the directory above it exist and are
// this user's alone (directories, not links, mode 0700): only then may a
// command connect to the socket there, which no one else can have put
// in its place.
func Private(dir string) bool {
	return ownDir(filepath.Dir(dir), false) == nil && ownDir(dir, false) == nil
}

// Socket returns the path of the holder's socket in dir.
func Socket(dir string) string { return filepath.Join(dir, socketName) }

// Start starts the holder of the store at url in dir, in the background:
// the awr binary running this process (exe), in a session of its own,
// with no standard streams, the URL in its environment (EnvURL). It
// returns at once; the holder serves from the next command on, or exits
// at once when another holder serves dir already or the store cannot be
// reached. Errors: the process could not be started.
func Start(exe, url, dir string) error {
	if dir == "" {
		return nil
	}
	cmd := exec.Command(exe, Command)
	cmd.Env = append(os.Environ(), EnvURL+"="+url)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the store's connection holder: %w", err)
	}
	return cmd.Process.Release()
}

// credentialFiles are the files the driver may read credentials from
// when it connects to url, as pgx finds them: the password file and the
// service file (a parameter of the URL, else PGPASSFILE and
// PGSERVICEFILE, else ~/.pgpass and ~/.pg_service.conf) and the client
// certificate, its key and the root certificates (a parameter, else
// PGSSLCERT, PGSSLKEY and PGSSLROOTCERT, else under ~/.postgresql).
func credentialFiles(rawURL string) []string {
	var params neturl.Values
	if u, err := neturl.Parse(rawURL); err == nil {
		params = u.Query()
	}
	home, _ := os.UserHomeDir()
	var files []string
	for _, f := range []struct{ param, env, def string }{
		{"passfile", "PGPASSFILE", ".pgpass"},
		{"servicefile", "PGSERVICEFILE", ".pg_service.conf"},
		{"sslcert", "PGSSLCERT", ".postgresql/postgresql.crt"},
		{"sslkey", "PGSSLKEY", ".postgresql/postgresql.key"},
		{"sslrootcert", "PGSSLROOTCERT", ".postgresql/root.crt"},
	} {
		path := params.Get(f.param)
		if path == "" {
			path = os.Getenv(f.env)
		}
		if path == "" && home != "" {
			path = filepath.Join(home, f.def)
		}
		if path != "" {
			files = append(files, path)
		}
	}
	return files
}

// maxCredentialFile bounds how much of a credential file is read to name
// a holder.
const maxCredentialFile = 1 << 20

// fileSum is the SHA-256 of the first maxCredentialFile bytes of the
// regular file at path and its size, or nothing when there is none (a
// missing file, a directory, a device: the driver reads no credential
// from it either).
func fileSum(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00", fi.Size())
	if _, err := io.Copy(h, io.LimitReader(f, maxCredentialFile)); err != nil {
		return nil
	}
	return h.Sum(nil)
}
