package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"time"

	"tai/mcp/httppolicy"
	"tai/vault"
)

// ModelListTimeout bounds the request ListModels makes.
const ModelListTimeout = 5 * time.Second

// maxModelList bounds the answer ListModels reads.
const maxModelList = 4 << 20

// ListModels asks p's provider which models it serves, sorted by name:
// GET {base_url}/models for OpenAI-compatible servers and Ollama (its /v1
// API answers it), GET {base_url}/v1/models for Anthropic, with the
// profile's key. A provider that offers no list answers an error; the
// caller then does without one. A redirect to another origin is refused,
// so the key never leaves for a server the profile does not name.
func ListModels(ctx context.Context, p Profile, s *vault.Store, opts *ClientOptions) ([]string, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	key, err := profileKey(p, s, o.Getenv)
	if err != nil {
		return nil, err
	}
	base := p.BaseURLOrDefault()
	endpoint := base + "/models"
	if p.Provider == ProviderAnthropic {
		endpoint = base + "/v1/models"
	}
	ctx, cancel := context.WithTimeout(ctx, ModelListTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("profile %q: listing models: %w", p.Name, err)
	}
	switch {
	case p.Provider == ProviderAnthropic:
		req.Header.Set("x-api-key", key)
		req.Header.Set("anthropic-version", AnthropicVersion)
	case key != "":
		req.Header.Set("Authorization", "Bearer "+key)
	}
	client := httppolicy.FollowSameOrigin(o.HTTPClient)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("profile %q: listing models: %s", p.Name, redactKey(err.Error(), key))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelList))
	if err != nil {
		return nil, fmt.Errorf("profile %q: listing models: %w", p.Name, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("profile %q: %s answered %s to the model list request", p.Name, endpoint, resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("profile %q: the model list from %s is not the expected JSON: %v", p.Name, endpoint, err)
	}
	var out []string
	for _, m := range list.Data {
		if m.ID != "" {
			out = append(out, m.ID)
		}
	}
	sort.Strings(out)
	return out, nil
}
