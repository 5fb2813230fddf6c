package mcp

import (
	"net"
	"strings"
)

// IsLoopback reports whether host (no port; an IPv6 literal with or
// without brackets, a trailing dot allowed) names this machine's loopback
// interface for a client that dials it: "localhost" or an address in
// 127.0.0.0/8 or ::1. Names under .localhost are not taken: a resolver
// may send them to DNS, which could answer with any address.
func IsLoopback(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsLoopback()
}
