package llm

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"tai/engine/llm/llmtest"
)

func TestListModels(t *testing.T) {
	oa := llmtest.NewOpenAI(t)
	oa.SetModels("gpt-b", "gpt-a")
	oa.RequireKey("sk-list")
	an := llmtest.NewAnthropic(t)
	an.SetModels("claude-x")
	none := llmtest.NewOpenAI(t)
	env := func(k string) string {
		if k == "LIST_API_KEY" {
			return "sk-list"
		}
		return ""
	}
	tests := []struct {
		name string
		p    Profile
		want []string
		err  string
	}{
		{"openai", Profile{Name: "o", Provider: ProviderOpenAI, BaseURL: oa.BaseURL, Model: "m", KeyEnv: "LIST_API_KEY"}, []string{"gpt-a", "gpt-b"}, ""},
		{"anthropic", Profile{Name: "a", Provider: ProviderAnthropic, BaseURL: an.BaseURL, Model: "m", KeyEnv: "LIST_API_KEY"}, []string{"claude-x"}, ""},
		{"no list offered", Profile{Name: "n", Provider: ProviderOpenAI, BaseURL: none.BaseURL, Model: "m"}, nil, "404"},
		{"wrong key", Profile{Name: "w", Provider: ProviderOpenAI, BaseURL: oa.BaseURL, Model: "m"}, nil, "401"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ListModels(context.Background(), tt.p, nil, &ClientOptions{Getenv: env})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestListModelsRefusesCrossOriginRedirect: a model list that redirects
// to another origin is not followed, so the key never reaches it; one
// within the origin is.
func TestListModelsRefusesCrossOriginRedirect(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Write([]byte(`{"data":[{"id":"stolen"}]}`))
	}))
	defer other.Close()
	list := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away/models":
			http.Redirect(w, r, other.URL+"/models", http.StatusFound)
		case "/here/models":
			http.Redirect(w, r, "/v2/models", http.StatusFound)
		case "/v2/models":
			w.Write([]byte(`{"data":[{"id":"m1"}]}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer list.Close()
	env := func(string) string { return "sk-redirected-key" }
	p := Profile{Name: "r", Provider: ProviderOpenAI, BaseURL: list.URL + "/away", Model: "m", KeyEnv: "LIST_API_KEY"}
	got, err := ListModels(context.Background(), p, nil, &ClientOptions{Getenv: env})
	if err == nil || !strings.Contains(err.Error(), "another origin") || strings.Contains(err.Error(), "sk-redirected-key") {
		t.Fatalf("cross-origin: got %v, %v; want a refusal naming another origin, without the key", got, err)
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("the other origin was asked %d times", n)
	}
	p.BaseURL = list.URL + "/here"
	got, err = ListModels(context.Background(), p, nil, &ClientOptions{Getenv: env})
	if err != nil || !reflect.DeepEqual(got, []string{"m1"}) {
		t.Fatalf("same origin: got %v, %v; want [m1]", got, err)
	}
}
