// Package oauthtest runs, inside a test process, an OAuth authorization
// server and a protected MCP server behind it, both on loopback, in every
// discovery variant the MCP authorization specification allows, so the
// client side of OAuth can be tested end to end without the network. The
// authorization endpoint redirects at once (no login page), so a
// "browser" that follows redirects (Browser) completes a login.
//
//	srv := oauthtest.New(t, oauthtest.Options{PRM: oauthtest.PRMHeader})
//	cfg := &oauth.Config{Server: "s", URL: srv.URL(), Store: &oauth.MemoryStore{},
//		Person: &oauth.Person{Open: srv.Browser}}
//
// It imports nothing of tai, and is imported only by tests.
package oauthtest
