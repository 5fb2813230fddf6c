// Package elicit reads what a server asks a person through
// elicitation/create (MCP 2025-11-25) and checks the answer before it goes
// back: the request and result types, the form a requestedSchema
// describes (form mode), and the link a URL-mode request points at.
//
//	req, err := elicit.ParseRequest(params) // mode, message, schema or URL
//	form, err := elicit.ParseForm(req.RequestedSchema)
//	// err is an *Unshowable ("this server asked for a form tai cannot
//	// show: …") for any schema outside the spec's flat subset; never a panic
//	v, err := form.Fields[0].Parse("42")   // a typed answer, checked
//	content, err := form.Content(answers)  // defaults applied (SEP-1034)
//	link, err := elicit.ParseLink(req.URL) // host in punycode, warnings
//
// A form is flat: strings (with the email, uri, date and date-time
// formats checked, lengths and a pattern Go's regexp reads), numbers and
// integers (with bounds), booleans, and enums, single and multiple,
// titled (oneOf/anyOf of const and title, SEP-1330) or not. A field whose
// name reads as a credential's (vault/secret.CredentialName) is marked
// Secret, so the screen can warn that servers must not ask for secrets
// this way.
//
// It imports the standard library, golang.org/x/net/idna and the leaves
// mcp/screen and vault/secret; nothing else of tai.
package elicit
