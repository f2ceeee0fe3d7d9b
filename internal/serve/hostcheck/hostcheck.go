// Package hostcheck holds what awr's two HTTP services (awr-mcp --listen
// and awr ui) check of a request's address before they answer it: the
// Host header values a service at an address answers, and whether a
// host is loopback. One home, so the two services cannot drift apart.
package hostcheck

import (
	"net"
	"strings"
)

// Loopback reports whether host (a name or an IP address, without a
// port) is localhost or a loopback IP address.
func Loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackAddr is Loopback of a HOST:PORT's host (of the whole string
// when it has no port).
func LoopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	return Loopback(host)
}

// Allowed returns the Host header values, lower case, a request may carry
// for a service listening at addr (HOST:PORT): addr itself and, on a
// loopback address, localhost, 127.0.0.1 and [::1] with addr's port; on
// port 80 each of them also without the port, as a browser sends it.
func Allowed(addr string) map[string]bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return map[string]bool{strings.ToLower(addr): true}
	}
	out := map[string]bool{strings.ToLower(net.JoinHostPort(host, port)): true}
	if Loopback(host) {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			out[net.JoinHostPort(h, port)] = true
		}
	}
	if port == "80" {
		for h := range out {
			if hh, _, err := net.SplitHostPort(h); err == nil {
				if strings.Contains(hh, ":") {
					hh = "[" + hh + "]"
				}
				out[hh] = true
			}
		}
	}
	return out
}
