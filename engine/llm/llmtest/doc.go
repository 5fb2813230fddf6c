// Package llmtest runs in-process fakes of the two model APIs tai speaks,
// OpenAI chat completions and Anthropic Messages, for tests. A fake answers
// from a script of turns (then, optionally, from a rule computed from the
// request), streams with server-sent events when asked exactly as the real
// APIs do, validates requests the way the real APIs reject them, injects
// failures (an HTTP status with Retry-After, a stream cut short, a stream
// that hangs, an error event) and records every request it received.
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
