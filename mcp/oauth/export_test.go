package oauth

import "net"

// SetPrivateAddr replaces the test of a private address until the test's
// cleanup calls the function returned.
func SetPrivateAddr(f func(ip net.IP, port string) bool) func() {
	old := privateAddr
	privateAddr = f
	return func() { privateAddr = old }
}
