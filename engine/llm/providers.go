package llm

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Input is a kind of content a provider's API takes in a message.
type Input string

// The kinds of content a message can carry.
const (
	InputText   Input = "text"
	InputImages Input = "images"
	InputAudio  Input = "audio"
)

// providerSpec is everything tai knows of one provider, in one place: adding
// a provider is one entry here, one client file and one fake in llmtest.
type providerSpec struct {
	name string
	// baseURL is the default base URL of a profile that sets none.
	baseURL string
	// baseURLHint completes "check the base URL" after a 404 that reached
	// no completion endpoint.
	baseURLHint string
	// keyEnv and baseURLEnv are the variables the environment's profile
	// reads (EnvProfile), for a provider with an SDK convention; a
	// provider without keyEnv is not read from the environment.
	keyEnv, baseURLEnv string
	// needsKey refuses a profile without a key before any request.
	needsKey bool
	// families are the model families a profile without a model picks
	// from (DefaultModelFamilies); without them no model is picked from
	// the provider's list by family.
	families []string
	// fallbackModel is what a profile without a model tries when the
	// provider's list cannot be had.
	fallbackModel string
	// modelsURL is where the provider lists its models, from the base URL.
	modelsURL func(base string) string
	// auth sets the headers that carry key (and the API version) on every
	// request, completions and model lists alike.
	auth func(h http.Header, key string)
	// client builds the provider's ChatClient for a profile that names a
	// model (and for Ollama's, which probes for one).
	client func(cfg ProviderConfig) ChatClient
	// takes is what the provider's API takes in a message; a given model
	// may take less.
	takes []Input
}

// providerTable holds the providers a Profile may name, in the order the
// environment is read (OPENAI_API_KEY before ANTHROPIC_API_KEY).
var providerTable = []providerSpec{
	{
		name:          ProviderOpenAI,
		baseURL:       DefaultOpenAIBaseURL,
		baseURLHint:   "OpenAI-compatible servers usually end in /v1",
		keyEnv:        "OPENAI_API_KEY",
		baseURLEnv:    "OPENAI_BASE_URL",
		families:      []string{"mini", "gpt"},
		fallbackModel: DefaultOpenAIModel,
		modelsURL:     func(base string) string { return base + "/models" },
		auth:          bearer,
		client:        func(cfg ProviderConfig) ChatClient { return NewOpenAI(cfg) },
		takes:         []Input{InputText, InputImages, InputAudio},
	},
	{
		name:          ProviderAnthropic,
		baseURL:       DefaultAnthropicBaseURL,
		baseURLHint:   "it is the API root, without /v1",
		keyEnv:        "ANTHROPIC_API_KEY",
		baseURLEnv:    "ANTHROPIC_BASE_URL",
		needsKey:      true,
		families:      []string{"sonnet", "opus", "haiku"},
		fallbackModel: DefaultAnthropicModel,
		modelsURL: func(base string) string {
			return strings.TrimSuffix(base, "/v1") + "/v1/models?limit=1000"
		},
		auth: func(h http.Header, key string) {
			if key != "" {
				h.Set("x-api-key", key)
			}
			h.Set("anthropic-version", AnthropicVersion)
		},
		client: func(cfg ProviderConfig) ChatClient { return NewAnthropic(cfg) },
		takes:  []Input{InputText, InputImages},
	},
	{
		name:        ProviderOllama,
		baseURL:     DefaultOllamaBaseURL,
		baseURLHint: "OpenAI-compatible servers usually end in /v1",
		modelsURL:   func(base string) string { return base + "/models" },
		auth:        bearer,
		client: func(cfg ProviderConfig) ChatClient {
			cfg.Provider = ProviderOllama
			return &ollamaClient{cfg: cfg}
		},
		takes: []Input{InputText, InputImages},
	},
}

// bearer sends key, when there is one, as an OAuth bearer token, as
// OpenAI-compatible APIs take it.
func bearer(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// providerOf returns the entry of the provider named name; an unknown
// name (which Validate refuses) gets the OpenAI-compatible one, as
// every switch on the name did.
func providerOf(name string) *providerSpec {
	for i := range providerTable {
		if providerTable[i].name == name {
			return &providerTable[i]
		}
	}
	return &providerTable[0]
}

// known reports whether name is a provider's.
func known(name string) bool {
	for _, p := range providerTable {
		if p.name == name {
			return true
		}
	}
	return false
}

// ProviderNames returns the names of the providers a Profile may use.
func ProviderNames() []string {
	out := make([]string, len(providerTable))
	for i, p := range providerTable {
		out[i] = p.name
	}
	return out
}

// ProviderInfo is what a person or a script may read of a provider.
type ProviderInfo struct {
	Name          string  `json:"name"`
	BaseURL       string  `json:"base_url"`          // the default
	KeyEnv        string  `json:"key_env,omitempty"` // the variable the environment's profile reads its key from
	Takes         []Input `json:"takes"`             // what its API takes in a message
	PicksByFamily bool    `json:"picks_by_family"`   // a profile naming no model picks one by family
}

// Providers returns what tai knows of each provider a Profile may use,
// in the table's order.
func Providers() []ProviderInfo {
	out := make([]ProviderInfo, len(providerTable))
	for i, p := range providerTable {
		out[i] = ProviderInfo{Name: p.name, BaseURL: p.baseURL, KeyEnv: p.keyEnv, Takes: slices.Clone(p.takes), PicksByFamily: len(p.families) > 0}
	}
	return out
}

// ProviderTakes returns what provider's API takes in a message (text,
// images, audio), or nil for a name no provider has.
func ProviderTakes(name string) []Input {
	if !known(name) {
		return nil
	}
	return append([]Input(nil), providerOf(name).takes...)
}

// FamilyProviders returns the names of the providers whose profiles,
// naming no model, pick one from the provider's list by family (see
// DefaultModelFamilies and tai.model_families).
func FamilyProviders() []string {
	var out []string
	for _, p := range providerTable {
		if len(p.families) > 0 {
			out = append(out, p.name)
		}
	}
	return out
}

// OneOf lists names as "a", "b" or "c", quoted, for an error's advice.
func OneOf(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
