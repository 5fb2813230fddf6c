package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"tai/mcp/httppolicy"
	"tai/vault"
	"tai/vault/secret"
)

// ModelListTimeout bounds the request ListModels makes.
const ModelListTimeout = 5 * time.Second

// maxModelList bounds the answer ListModels reads.
const maxModelList = 4 << 20

// ModelInfo is a model a provider lists.
type ModelInfo struct {
	ID string
	// Created is when the provider made the model available, as its list
	// says ("created" in Unix seconds from OpenAI-compatible servers,
	// "created_at" from Anthropic); zero when it does not say.
	Created time.Time
}

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
	models, err := listModels(ctx, o.HTTPClient, p.Provider, p.BaseURLOrDefault(), key)
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	out := make([]string, len(models))
	for i, m := range models {
		out[i] = m.ID
	}
	sort.Strings(out)
	return out, nil
}

// plainID reports whether id can name a model: 1 to 256 printable ASCII
// characters, no space. A server's list is not trusted: an id with control
// characters would reach the terminal in a notice.
func plainID(id string) bool {
	if id == "" || len(id) > 256 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] > '~' {
			return false
		}
	}
	return true
}

// listModels asks the provider at base which models key may use, bounded
// by ModelListTimeout; ids that are not plainID are left out.
func listModels(ctx context.Context, hc *http.Client, provider, base, key string) ([]ModelInfo, error) {
	pr := providerOf(provider)
	endpoint := pr.modelsURL(base)
	ctx, cancel := context.WithTimeout(ctx, ModelListTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	pr.auth(req.Header, key)
	resp, err := httppolicy.FollowSameOrigin(hc).Do(req)
	if err != nil {
		return nil, fmt.Errorf("listing models: %s", secret.Hide(err.Error(), key))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelList))
	if err != nil {
		return nil, fmt.Errorf("listing models: %w", err)
	}
	shown := HideUserinfo(strings.TrimSuffix(endpoint, "?limit=1000"))
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s answered %s to the model list request", shown, resp.Status)
	}
	var list struct {
		Data []struct {
			ID        string `json:"id"`
			Created   *int64 `json:"created"`
			CreatedAt string `json:"created_at"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("the model list from %s is not the expected JSON: %v", shown, err)
	}
	var out []ModelInfo
	for _, m := range list.Data {
		if !plainID(m.ID) {
			continue
		}
		info := ModelInfo{ID: m.ID}
		if t, err := time.Parse(time.RFC3339, m.CreatedAt); err == nil {
			info.Created = t
		}
		if m.Created != nil && *m.Created > 0 {
			info.Created = time.Unix(*m.Created, 0)
		}
		out = append(out, info)
	}
	return out, nil
}
