// Package llm talks to language models: the provider-neutral chat types
// (Message, ToolCall, ToolSpec, Request, Response, Usage), the ChatClient
// interface with its OpenAI-compatible and Anthropic clients, the request
// loop every client shares (retries of 429 and 5xx with RetryNotice, per
// attempt and idle timeouts, key redaction, same-origin redirects), model
// lists, and profiles: a named model configuration stored in the vault,
// resolved from the environment or a local Ollama, and the ChatClient
// built from one (NewChatClient). A profile that names no model gets the
// newest model of a preferred family its provider lists (PickModel),
// picked once and kept in the vault.
//
// Whatever provider wrote a history, the request built from it is one the
// provider accepts: tool-call ids unique and in the provider's alphabet
// (wireIDs), no blank text sent to Anthropic, the token cap in the field
// the model takes, at most MaxOpenAITools tools. Every documented finish
// reason maps onto a Finish* value; CutOff and Withheld say what they
// mean for the answer.
//
//	p, err := llm.ResolveProfile(store, "", nil)
//	if err != nil { ... }
//	cl, err := llm.NewChatClient(p, store, nil)
//	if err != nil { ... }
//	resp, err := cl.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}}, nil)
//
// To add a provider: a Provider* name and one entry in providerTable
// (providers.go: its default base URL, the variables the environment's
// profile reads, the models path, the auth headers, the model families a
// profile without a model picks from, the constructor, and what its API
// takes: text, images, audio); a client implementing ChatClient on
// ProviderConfig in a file of its own (openai.go and anthropic.go are
// two); a fake of its API beside the others in llmtest. Validate,
// BaseURLOrDefault, EnvProfile, NewChatClient, ListModels, the 404 hint
// and tai.model_families read the table; stdlib/meta/tai.lua's
// tai.Profile lists the names, and a test holds it to the table.
//
// It imports vault (profiles and keys live there) and the leaf packages
// mcp/sse and mcp/httppolicy only: never mcp, engine or anything of tools,
// sessions or agents, which are built on top of it.
package llm
