// Package sampling reads what a server asks tai's model through
// sampling/createMessage (MCP 2025-11-25) and writes the answer that goes
// back: the request (messages, system prompt, maxTokens, model
// preferences, the tools it offers the model), the person's decision on
// it (approve, deny, approve with the prompt edited, with or without its
// tools) and the result.
//
//	req, err := sampling.Parse(params) // bounded: MaxRequestBytes of text, MaxMessages
//	req.Prompt()                       // the text of its last user message, which a person may edit
//	res := sampling.Result{Model: "gpt-x", Text: "…", StopReason: sampling.EndTurn}
//	raw, err := json.Marshal(res)
//
// It knows nothing of models or people: the bridge puts the request to the
// person, has the person's model answer, and returns the result.
//
// It imports the standard library only.
package sampling
