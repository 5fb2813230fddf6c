package llm

import (
	"net/http"
	"slices"
	"testing"
)

// TestProviderTable: every provider's entry is whole (a default base URL,
// a models URL, auth, a client, text among what it takes), so a new
// entry cannot leave a switch on the name to fall back on OpenAI's.
func TestProviderTable(t *testing.T) {
	if got, want := ProviderNames(), []string{ProviderOpenAI, ProviderAnthropic, ProviderOllama}; !slices.Equal(got, want) {
		t.Fatalf("ProviderNames() = %v, want %v", got, want)
	}
	for _, p := range providerTable {
		switch {
		case p.baseURL == "" || p.baseURLHint == "" || p.modelsURL == nil || p.auth == nil || p.client == nil:
			t.Errorf("%s: the entry is missing a field", p.name)
		case !slices.Contains(p.takes, InputText):
			t.Errorf("%s: takes %v, without text", p.name, p.takes)
		case p.needsKey && p.keyEnv == "":
			t.Errorf("%s: needs a key and names no variable for one", p.name)
		case len(p.families) > 0 && p.fallbackModel == "":
			t.Errorf("%s: picks by family and has no model to fall back on", p.name)
		}
		if err := (Profile{Name: "t", Provider: p.name}).Validate(); err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
		if got := (Profile{Provider: p.name}).BaseURLOrDefault(); got != p.baseURL {
			t.Errorf("%s: BaseURLOrDefault() = %q, want %q", p.name, got, p.baseURL)
		}
		h := http.Header{}
		p.auth(h, "k-123456")
		if len(h) == 0 {
			t.Errorf("%s: auth sent no header for a key", p.name)
		}
	}
}

func TestProviderTakes(t *testing.T) {
	if got := ProviderTakes(ProviderAnthropic); !slices.Equal(got, []Input{InputText, InputImages}) {
		t.Errorf("anthropic takes %v", got)
	}
	if got := ProviderTakes(ProviderOpenAI); !slices.Contains(got, InputAudio) {
		t.Errorf("openai takes %v, without audio", got)
	}
	if got := ProviderTakes("nope"); got != nil {
		t.Errorf("an unknown provider takes %v", got)
	}
}

func TestOneOf(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{
		{[]string{"a"}, `"a"`},
		{[]string{"a", "b"}, `"a" or "b"`},
		{[]string{"a", "b", "c"}, `"a", "b" or "c"`},
	} {
		if got := OneOf(tt.in); got != tt.want {
			t.Errorf("OneOf(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
