// Package llmtest runs in-process fakes of the two model APIs tai speaks,
// OpenAI chat completions and Anthropic Messages, for tests. A fake answers
// from a script of turns (then, optionally, from a rule computed from the
// request), streams with server-sent events when asked exactly as the real
// APIs do, injects failures (an HTTP status with Retry-After, a stream cut
// short, a stream that hangs, an error event) and records every request it
// received.
//
// A fake checks every request as the real API would: against the API's
// request schema, trimmed from its published reference into
// testdata/*.schema.json and checked by a small validator of the JSON
// Schema subset those files use (schema.go), and against the rules a
// schema cannot state (roles alternating, every tool call answered). A
// request the API would refuse is answered 400 in the API's error shape
// and fails the test, unless the test called AllowInvalid.
//
//	srv := llmtest.NewOpenAI(t,
//		llmtest.Calls(llmtest.Call("read_file", `{"path":"a.txt"}`)),
//		llmtest.Say("The file says hello."),
//	)
//	p := llm.Profile{Name: "t", Provider: "openai", BaseURL: srv.BaseURL, Model: "fake"}
//	...
//	for _, r := range srv.Requests() { /* r.Body is the raw JSON */ }
//
// The fakes listen on a loopback address and close when the test ends.
//
// It imports nothing of tai, so any package's tests can use it, including
// those of engine/llm, whose clients it fakes.
package llmtest
