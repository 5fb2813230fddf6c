// Package oauth is the client side of MCP authorization (2025-11-25):
// discovery of the protected resource metadata and of the authorization
// server's metadata, tai's client identity there (a pre-registered client
// id, a client ID metadata document, or a dynamic registration kept and
// reused per issuer), the authorization code flow with PKCE S256, state
// and the resource indicator, the loopback redirect listener and the
// redirect URL pasted back from a browser elsewhere, refresh, and step-up
// on insufficient_scope. Tokens and registrations reach it through a
// TokenStore; an Authorizer plugs into mcp.HTTPTransport. Nothing here
// knows the vault, the engine or Lua.
//
//	cfg := oauth.Config{Server: "linear", URL: "https://mcp.linear.app/mcp",
//		Store: store, Person: &oauth.Person{Say: say, Paste: lines}}
//	tok, err := oauth.Login(ctx, &cfg, challenge, "") // challenge: the 401's Bearer params
//	...
//	tr, err := mcp.NewHTTPTransport(cfg.URL, nil, &mcp.HTTPOptions{Authorizer: oauth.NewAuthorizer(cfg)})
//
// Every URL tai sends credentials to must be https, or plain http to a
// loopback address; redirects are followed within one origin only; every
// answer is capped at MaxDocument bytes; errors never carry a token,
// code, verifier or secret.
package oauth
