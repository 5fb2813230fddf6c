package oauth

import "net"

// SetPrivateAddr replaces, for the requests of cfg, the test of a private
// address.
func SetPrivateAddr(cfg *Config, f func(ip net.IP, port string) bool) {
	cfg.privateAddr = f
}
