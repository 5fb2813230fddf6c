package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"tai/mcp/httppolicy"
	"tai/vault"
	"tai/vault/secret"
)

// Provider names a Profile may use.
const (
	// ProviderOpenAI is any OpenAI-compatible chat-completions API
	// (OpenAI, OpenRouter, llama.cpp, vLLM, LM Studio, Ollama's /v1).
	ProviderOpenAI = "openai"
	// ProviderAnthropic is Anthropic's Messages API.
	ProviderAnthropic = "anthropic"
	// ProviderOllama is a local Ollama through its OpenAI-compatible /v1
	// endpoint; no key; when the profile names no model, the first model
	// Ollama lists is used (probed when the first completion is asked for).
	ProviderOllama = "ollama"
)

// Defaults used when a profile or the environment leaves a field empty.
const (
	// DefaultProfileName names the profile built from the environment.
	DefaultProfileName = "default"
	// OllamaProfileName names the local Ollama fallback profile.
	OllamaProfileName = "ollama"
	// DefaultOpenAIBaseURL is the OpenAI API's base URL (with /v1, as the
	// OpenAI SDKs' OPENAI_BASE_URL).
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	// DefaultAnthropicBaseURL is the Anthropic API's base URL (without /v1,
	// as the Anthropic SDKs' ANTHROPIC_BASE_URL).
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	// DefaultOllamaBaseURL is a local Ollama's OpenAI-compatible endpoint.
	DefaultOllamaBaseURL = "http://127.0.0.1:11434/v1"
	// DefaultOpenAIModel is the model a profile without one tries on an
	// OpenAI-compatible server whose model list cannot be had (a model is
	// otherwise picked from the list: see PickModel).
	DefaultOpenAIModel = "gpt-4.1-mini"
	// DefaultAnthropicModel is the model a profile without one tries on
	// Anthropic when the model list cannot be had (a model is otherwise
	// picked from the list: see PickModel).
	DefaultAnthropicModel = "claude-sonnet-5"
	// OllamaProbeTimeout bounds the request to Ollama's /api/tags.
	OllamaProbeTimeout = 2 * time.Second
)

// currentKey is the reserved profiles-table row remembering the current
// profile's name. Profile names never start with '.', so it cannot clash.
const currentKey = ".current"

// HowToConfigure says how to give tai a model. It is the text of
// ErrNoModel.
const HowToConfigure = `no model is configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY (TAI_MODEL
picks the model), run a local Ollama on 127.0.0.1:11434 (ollama pull llama3.2),
or keep a key with /secret NAME (typed unseen) and /profile new NAME
provider=openai model=… key_secret=NAME. /help models says more`

// ErrNoModel reports that no profile, no provider key and no local Ollama
// could be found. Its text is HowToConfigure.
var ErrNoModel = errors.New(HowToConfigure)

// ErrProfileNotFound reports a profile name that is not stored. The
// wrapping error names the profile and lists the known ones.
var ErrProfileNotFound = errors.New("profile not found")

// Profile is a named model configuration, stored in the vault as JSON.
type Profile struct {
	Name      string   `json:"name"`
	Provider  string   `json:"provider"`             // ProviderOpenAI, ProviderAnthropic or ProviderOllama
	BaseURL   string   `json:"base_url,omitempty"`   // empty: the provider's default
	Model     string   `json:"model,omitempty"`      // empty: picked from the provider's list on first use (see PickModel; Ollama: its first model)
	KeySecret string   `json:"key_secret,omitempty"` // vault secret holding the API key
	KeyEnv    string   `json:"key_env,omitempty"`    // environment variable holding the API key
	System    string   `json:"system,omitempty"`     // system prompt
	Tools     []string `json:"tools,omitempty"`      // tool names or patterns (mcp_github_*) offered; empty: all
	MaxTokens int      `json:"max_tokens,omitempty"` // 0: the provider's default
	// MaxTokensField names the field an OpenAI-compatible request carries
	// the cap in: "max_tokens" or "max_completion_tokens"; empty: the one
	// the model takes (max_completion_tokens for OpenAI's o-series,
	// gpt-4.1, gpt-4o and gpt-5 models, max_tokens for others). Set it for
	// a server that names its models otherwise (an Azure deployment).
	MaxTokensField string   `json:"max_tokens_field,omitempty"`
	PassEnv        []string `json:"pass_env,omitempty"` // credential-looking variables shell commands may see
	// Sandbox false runs the shell tool's commands without the sandbox
	// for sessions on this profile (nil or true: sandboxed).
	Sandbox *bool `json:"sandbox,omitempty"`
	// Images false sends a model no image or audio a tool returned, only
	// a label for each; nil or true sends them where the provider takes
	// them, and a model that refuses one (a 400 naming images) gets
	// labels for the rest of the session.
	Images *bool `json:"images,omitempty"`
}

// ShellUnsandboxed reports whether p turns the shell's sandbox off.
func (p Profile) ShellUnsandboxed() bool { return p.Sandbox != nil && !*p.Sandbox }

// ValidProfileName reports whether name is a usable profile name: 1–64 of
// letters, digits, '-', '_' and '.', not starting with '.'.
func ValidProfileName(name string) error {
	if name == "" {
		return errors.New("profile name is empty: give 1-64 letters, digits, '-', '_' or '.'")
	}
	if len(name) > 64 {
		return fmt.Errorf("profile name %.20q… is %d bytes long: use at most 64", name, len(name))
	}
	if name[0] == '.' {
		return fmt.Errorf("profile name %q starts with '.': start with a letter or digit", name)
	}
	for _, r := range name {
		ok := r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("profile name %q contains %q: use only letters, digits, '-', '_' or '.'", name, r)
		}
	}
	return nil
}

// Validate checks p for a usable name, a known provider, at most one key
// source, and a base URL that is http(s).
func (p Profile) Validate() error {
	if err := ValidProfileName(p.Name); err != nil {
		return err
	}
	switch {
	case p.Provider == "":
		return fmt.Errorf("profile %q: provider is empty: use %s", p.Name, OneOf(ProviderNames()))
	case !known(p.Provider):
		return fmt.Errorf("profile %q: unknown provider %q: use %s", p.Name, p.Provider, OneOf(ProviderNames()))
	}
	if p.KeySecret != "" && p.KeyEnv != "" {
		return fmt.Errorf("profile %q: both key_secret and key_env are set: keep one", p.Name)
	}
	if p.KeyEnv != "" {
		if err := ValidKeyEnv(p.KeyEnv); err != nil {
			return fmt.Errorf("profile %q: %w", p.Name, err)
		}
	}
	if p.KeySecret != "" {
		if err := vault.ValidSecretName(p.KeySecret); err != nil {
			return fmt.Errorf("profile %q: key_secret: %w", p.Name, err)
		}
	}
	if p.BaseURL != "" && !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
		return fmt.Errorf("profile %q: base_url %q is not an http:// or https:// URL", p.Name, HideUserinfo(p.BaseURL))
	}
	if p.BaseURL != "" {
		if u, err := url.Parse(p.BaseURL); err != nil || u.Host == "" || strings.ContainsFunc(p.BaseURL, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return fmt.Errorf("profile %q: base_url %q is not a valid URL: give scheme and host, without spaces or control characters", p.Name, HideUserinfo(p.BaseURL))
		}
	}
	switch p.MaxTokensField {
	case "", FieldMaxTokens, FieldMaxCompletionTokens:
	default:
		return fmt.Errorf("profile %q: max_tokens_field %q is not a field name: use %q or %q, or leave it empty to follow the model", p.Name, p.MaxTokensField, FieldMaxTokens, FieldMaxCompletionTokens)
	}
	if p.MaxTokens < 0 {
		return fmt.Errorf("profile %q: max_tokens is %d: use 0 (provider default) or a positive count", p.Name, p.MaxTokens)
	}
	for _, n := range p.PassEnv {
		if err := ValidPassEnv(n); err != nil {
			return fmt.Errorf("profile %q: %w", p.Name, err)
		}
	}
	return nil
}

// notKeyEnvs are environment variables that never hold an API key: naming
// one as key_env would send it to the model's API and hide it from the
// shell tool (every key_env is stripped and redacted).
var notKeyEnvs = map[string]bool{
	"HOME": true, "PATH": true, "USER": true, "LOGNAME": true, "SHELL": true, "PWD": true, "OLDPWD": true,
	"TERM": true, "LANG": true, "LANGUAGE": true, "TMPDIR": true, "TMP": true, "TEMP": true, "EDITOR": true,
	"VISUAL": true, "PAGER": true, "DISPLAY": true, "HOSTNAME": true, "MAIL": true, "TZ": true,
	vault.PassphraseEnv: true,
}

// ValidKeyEnv checks that name can be a profile's key_env: a variable name
// that says it holds a credential (secret.CredentialName: OPENAI_API_KEY,
// HF_TOKEN, GH_PAT), and not one of the ordinary variables such as HOME, PATH,
// LANG, LC_* or XDG_*, nor the vault passphrase.
func ValidKeyEnv(name string) error {
	const accepted = "name a variable that holds the API key and says so, such as OPENAI_API_KEY, MY_TOKEN, ROUTER_SECRET or GH_PAT"
	for i, r := range name {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return fmt.Errorf("key_env %q is not an environment variable name: use letters, digits and '_', not starting with a digit", name)
		}
	}
	up := strings.ToUpper(name)
	if notKeyEnvs[up] || strings.HasPrefix(up, "LC_") || strings.HasPrefix(up, "XDG_") {
		return fmt.Errorf("key_env %s is not an API key variable (it would be sent to the model's API and hidden from commands): %s", name, accepted)
	}
	if secret.CredentialName(name) {
		return nil
	}
	return fmt.Errorf("key_env %s does not look like an API key variable: %s", name, accepted)
}

// BaseURLOrDefault returns p.BaseURL, or the provider's default when empty.
func (p Profile) BaseURLOrDefault() string {
	if p.BaseURL != "" {
		return strings.TrimRight(p.BaseURL, "/")
	}
	return providerOf(p.Provider).baseURL
}

// SaveProfile validates p and stores it under p.Name, replacing any profile
// of that name.
func SaveProfile(s *vault.Store, p Profile) error {
	if err := p.Validate(); err != nil {
		return err
	}
	data, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("profile %q: %w", p.Name, err)
	}
	if err := s.ProfilePut(p.Name, data); err != nil {
		return fmt.Errorf("save profile %q: %w", p.Name, err)
	}
	return nil
}

// LoadProfile returns the stored profile name. A missing profile is an error
// wrapping ErrProfileNotFound that lists the stored names.
func LoadProfile(s *vault.Store, name string) (Profile, error) {
	if err := ValidProfileName(name); err != nil {
		return Profile{}, err
	}
	data, err := s.ProfileGet(name)
	if errors.Is(err, vault.ErrNotFound) {
		names, _ := profileNames(s)
		known := "none stored"
		if len(names) > 0 {
			known = "stored: " + strings.Join(names, ", ")
		}
		return Profile{}, fmt.Errorf("%w: %q (%s); create it first or pick another", ErrProfileNotFound, name, known)
	}
	if err != nil {
		return Profile{}, fmt.Errorf("load profile %q: %w", name, err)
	}
	var p Profile
	if err := json.Unmarshal(data, &p); err != nil {
		return Profile{}, fmt.Errorf("profile %q is stored as invalid JSON (%v): save it again", name, err)
	}
	p.Name = name
	return p, nil
}

// ListProfiles returns the stored profiles sorted by name. A stored profile
// that does not decode is skipped.
func ListProfiles(s *vault.Store) ([]Profile, error) {
	names, err := profileNames(s)
	if err != nil {
		return nil, err
	}
	out := make([]Profile, 0, len(names))
	for _, n := range names {
		p, err := LoadProfile(s, n)
		if err != nil {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}

// DeleteProfile removes the stored profile name. When it was the current
// profile, no profile is current afterwards.
func DeleteProfile(s *vault.Store, name string) error {
	if err := ValidProfileName(name); err != nil {
		return err
	}
	if err := s.ProfileDelete(name); err != nil {
		if errors.Is(err, vault.ErrNotFound) {
			return fmt.Errorf("%w: %q: nothing to delete", ErrProfileNotFound, name)
		}
		return fmt.Errorf("delete profile %q: %w", name, err)
	}
	if cur, err := CurrentProfileName(s); err == nil && cur == name {
		return s.ProfileDelete(currentKey)
	}
	return nil
}

// CurrentProfileName returns the profile name remembered by
// SetCurrentProfile, or "" when none is.
func CurrentProfileName(s *vault.Store) (string, error) {
	data, err := s.ProfileGet(currentKey)
	if errors.Is(err, vault.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read current profile: %w", err)
	}
	var cur struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(data, &cur); err != nil {
		return "", nil
	}
	return cur.Name, nil
}

// SetCurrentProfile remembers name as the current profile: ResolveProfile
// with an empty name uses it from then on, in every tai process sharing the
// vault. The profile must be stored, or be one of the built-in
// DefaultProfileName and OllamaProfileName. An empty name forgets the
// choice.
func SetCurrentProfile(s *vault.Store, name string) error {
	if name == "" {
		err := s.ProfileDelete(currentKey)
		if errors.Is(err, vault.ErrNotFound) {
			return nil
		}
		return err
	}
	if name != DefaultProfileName && name != OllamaProfileName {
		if _, err := LoadProfile(s, name); err != nil {
			return err
		}
	}
	data, _ := json.Marshal(map[string]string{"name": name})
	if err := s.ProfilePut(currentKey, data); err != nil {
		return fmt.Errorf("switch to profile %q: %w", name, err)
	}
	return nil
}

func profileNames(s *vault.Store) ([]string, error) {
	all, err := s.ProfileList()
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	names := make([]string, 0, len(all))
	for _, n := range all {
		if !strings.HasPrefix(n, ".") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// EnvProfile returns the profile the environment describes: OPENAI_API_KEY
// (with OPENAI_BASE_URL and TAI_MODEL) first, else ANTHROPIC_API_KEY (with
// ANTHROPIC_BASE_URL and TAI_MODEL). Without TAI_MODEL its model is empty:
// the client picks one from the provider's list (see PickModel). ok is
// false when neither key is set.
// The profile is named DefaultProfileName and reads its key from the
// environment variable, so the key itself is never stored.
func EnvProfile(getenv func(string) string) (p Profile, ok bool) {
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, pr := range providerTable {
		if pr.keyEnv != "" && getenv(pr.keyEnv) != "" {
			return Profile{Name: DefaultProfileName, Provider: pr.name, BaseURL: getenv(pr.baseURLEnv), Model: getenv("TAI_MODEL"), KeyEnv: pr.keyEnv}, true
		}
	}
	return Profile{}, false
}

// OllamaProfile returns the local Ollama fallback profile; its model is
// TAI_MODEL, or empty to take the first model Ollama lists.
func OllamaProfile(getenv func(string) string) Profile {
	if getenv == nil {
		getenv = os.Getenv
	}
	return Profile{Name: OllamaProfileName, Provider: ProviderOllama, BaseURL: DefaultOllamaBaseURL, Model: getenv("TAI_MODEL")}
}

// ResolveProfile picks the profile to run with. A non-empty name (from
// --profile or a switch) must be stored, except that DefaultProfileName
// falls back to the environment's profile and then to Ollama, and
// OllamaProfileName to the Ollama profile. An empty name means the current
// profile (SetCurrentProfile), else a stored profile named "default", else
// EnvProfile, else OllamaProfile. ResolveProfile does no network I/O: the
// Ollama probe happens on the first completion. s may be nil (no vault).
func ResolveProfile(s *vault.Store, name string, getenv func(string) string) (Profile, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if name == "" && s != nil {
		cur, err := CurrentProfileName(s)
		if err != nil {
			return Profile{}, err
		}
		name = cur
	}
	if name == "" {
		name = DefaultProfileName
	}
	if s != nil {
		p, err := LoadProfile(s, name)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, ErrProfileNotFound) || (name != DefaultProfileName && name != OllamaProfileName) {
			return Profile{}, err
		}
	} else if err := ValidProfileName(name); err != nil {
		return Profile{}, err
	}
	switch name {
	case DefaultProfileName:
		if p, ok := EnvProfile(getenv); ok {
			return p, nil
		}
		return OllamaProfile(getenv), nil
	case OllamaProfileName:
		return OllamaProfile(getenv), nil
	}
	return Profile{}, fmt.Errorf("%w: %q (no vault open)", ErrProfileNotFound, name)
}

// ClientOptions tunes NewChatClient. A nil *ClientOptions means defaults.
type ClientOptions struct {
	// HTTPClient sends the requests; nil means a client without an overall
	// timeout (streams may run long; Timeout and IdleTimeout bound them).
	HTTPClient *http.Client
	// Getenv reads environment variables (for KeyEnv); nil means os.Getenv.
	Getenv func(string) string
	// Retry bounds retries of 429 and 5xx answers.
	Retry RetryPolicy
	// Timeout bounds one attempt (request to last byte); 0 means 10 minutes.
	Timeout time.Duration
	// IdleTimeout bounds the silence inside a streamed answer; 0 means
	// 2 minutes.
	IdleTimeout time.Duration
	// OnRetry, when set, is told of every retry before its wait, unless
	// the request's context carries its own callback (WithRetryNotice,
	// Events.OnRetry). A wait longer than the policy's Max is never made:
	// the call fails at once, naming the wait the API asked for.
	OnRetry func(RetryNotice)
	// ModelFamilies gives the families a profile without a model picks
	// from, by provider (see PickModel); nil means DefaultModelFamilies.
	ModelFamilies func(provider string) []string
	// OnModelChosen, when set, is told once which model a profile without
	// one was given, when it is picked (not when an earlier pick kept in
	// the vault is used), unless the request's context carries its own
	// callback (WithModelNotice).
	OnModelChosen func(ModelChoice)
}

// NewChatClient builds the ChatClient for p. It resolves the key (the vault
// secret KeySecret or the environment variable KeyEnv) and registers it
// with s.AddRedaction so it is scrubbed from everything tai shows or
// stores. It does no network I/O: a ProviderOllama profile without a model
// probes Ollama's /api/tags (bounded by OllamaProbeTimeout) on the first
// Complete, and a missing Ollama then yields an error wrapping ErrNoModel;
// another profile without a model takes, on the first Complete, the model
// picked for it earlier (kept in s), else asks the provider's model list
// once, picks the newest of the preferred families (PickModel), keeps it
// in s and tells ClientOptions.OnModelChosen. s may be nil when p has no
// KeySecret (then nothing is kept).
func NewChatClient(p Profile, s *vault.Store, opts *ClientOptions) (ChatClient, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	key, err := profileKey(p, s, o.Getenv)
	if err != nil {
		return nil, err
	}
	RedactUserinfo(s, p.BaseURL)
	pr := providerOf(p.Provider)
	cfg := ProviderConfig{
		BaseURL:     p.BaseURLOrDefault(),
		Model:       p.Model,
		APIKey:      key,
		MaxTokens:   p.MaxTokens,
		TokenField:  p.MaxTokensField,
		HTTPClient:  o.HTTPClient,
		Retry:       o.Retry,
		Timeout:     o.Timeout,
		IdleTimeout: o.IdleTimeout,
		OnRetry:     o.OnRetry,
		NoImages:    p.Images != nil && !*p.Images || !slices.Contains(pr.takes, InputImages),
	}
	if pr.needsKey && key == "" {
		return nil, fmt.Errorf("profile %q: the %s provider needs an API key: set key_secret or key_env (e.g. %s)", p.Name, pr.name, pr.keyEnv)
	}
	if p.Model == "" && len(pr.families) > 0 {
		cfg.Provider = pr.name
		return &autoModelClient{cfg: cfg, profile: p.Name, store: s, families: o.ModelFamilies, notify: o.OnModelChosen}, nil
	}
	return pr.client(cfg), nil
}

func profileKey(p Profile, s *vault.Store, getenv func(string) string) (string, error) {
	switch {
	case p.KeySecret != "":
		if s == nil {
			return "", fmt.Errorf("profile %q: key_secret %q needs the vault, and none is open", p.Name, p.KeySecret)
		}
		key, _, err := s.SecretGet(p.KeySecret)
		if errors.Is(err, vault.ErrNotFound) {
			return "", fmt.Errorf("profile %q: the vault has no secret %q holding the API key: store it with secret_set or point key_secret elsewhere", p.Name, p.KeySecret)
		}
		if err != nil {
			return "", fmt.Errorf("profile %q: read key secret %q: %w", p.Name, p.KeySecret, err)
		}
		if key == "" {
			return "", fmt.Errorf("profile %q: the vault secret %q is empty: store the API key in it", p.Name, p.KeySecret)
		}
		s.AddRedaction(p.KeySecret, key)
		return key, nil
	case p.KeyEnv != "":
		key := getenv(p.KeyEnv)
		if key == "" {
			return "", fmt.Errorf("profile %q: the environment variable %s holding the API key is unset or empty: export it or change key_env", p.Name, p.KeyEnv)
		}
		if s != nil {
			s.AddRedaction(p.KeyEnv, key)
		}
		return key, nil
	}
	return "", nil
}

// ollamaClient is an OpenAI client on a local Ollama whose model, when the
// profile names none, is taken from Ollama's list on first use.
type ollamaClient struct {
	cfg ProviderConfig

	mu     sync.Mutex
	client *OpenAIClient
}

func (c *ollamaClient) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	cl, err := c.ready(ctx)
	if err != nil {
		return Response{}, err
	}
	return cl.Complete(ctx, req, onText)
}

// ready probes Ollama once it succeeds; a failed probe is retried on the
// next call, so starting Ollama later works without restarting tai.
func (c *ollamaClient) ready(ctx context.Context) (*OpenAIClient, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	models, err := OllamaModels(ctx, c.cfg.HTTPClient, c.cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%w\n(local Ollama at %s: %v)", ErrNoModel, HideUserinfo(c.cfg.BaseURL), err)
	}
	model := c.cfg.Model
	switch {
	case model == "" && len(models) == 0:
		return nil, fmt.Errorf("%w\n(local Ollama at %s has no model pulled: run `ollama pull llama3.2`)", ErrNoModel, HideUserinfo(c.cfg.BaseURL))
	case model == "":
		model = models[0]
	case !slices.Contains(models, model) && !slices.Contains(models, model+":latest"):
		return nil, fmt.Errorf("local Ollama at %s has no model %q (it has: %s): run `ollama pull %s` or set TAI_MODEL to one it has", HideUserinfo(c.cfg.BaseURL), model, strings.Join(models, ", "), model)
	}
	cfg := c.cfg
	cfg.Model = model
	c.client = NewOpenAI(cfg)
	return c.client, nil
}

// OllamaModels lists the models of the Ollama whose OpenAI-compatible base
// URL is baseURL (ending in /v1), via its /api/tags, bounded by
// OllamaProbeTimeout.
func OllamaModels(ctx context.Context, hc *http.Client, baseURL string) ([]string, error) {
	hc = httppolicy.FollowSameOrigin(hc)
	ctx, cancel := context.WithTimeout(ctx, OllamaProbeTimeout)
	defer cancel()
	root := strings.TrimSuffix(strings.TrimRight(baseURL, "/"), "/v1")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/api/tags", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/tags answered %s", resp.Status)
	}
	var tags struct {
		Models []struct {
			Name  string `json:"name"`
			Model string `json:"model"`
		} `json:"models"`
	}
	if err := json.NewDecoder(limitReader(resp.Body, 4<<20)).Decode(&tags); err != nil {
		return nil, fmt.Errorf("GET /api/tags: undecodable answer: %v", err)
	}
	out := make([]string, 0, len(tags.Models))
	for _, m := range tags.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		if name != "" {
			out = append(out, name)
		}
	}
	return out, nil
}
