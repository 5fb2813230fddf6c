package llm

import (
	"errors"
	"net"
	"strings"
	"testing"

	"tai/engine/llm/llmtest"
	"tai/vault"
	"tai/vault/vaulttest"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestProfileValidate(t *testing.T) {
	ok := Profile{Name: "work", Provider: ProviderOpenAI, Model: "gpt-x"}
	cases := []struct {
		name string
		edit func(*Profile)
		want string // "" means valid
	}{
		{"valid", func(*Profile) {}, ""},
		{"anthropic with secret", func(p *Profile) { p.Provider, p.KeySecret = ProviderAnthropic, "anthropic-key" }, ""},
		{"ollama without model", func(p *Profile) { p.Provider, p.Model = ProviderOllama, "" }, ""},
		{"empty name", func(p *Profile) { p.Name = "" }, "name is empty"},
		{"dot name", func(p *Profile) { p.Name = ".current" }, "starts with '.'"},
		{"space in name", func(p *Profile) { p.Name = "my work" }, "contains ' '"},
		{"long name", func(p *Profile) { p.Name = strings.Repeat("a", 65) }, "at most 64"},
		{"no provider", func(p *Profile) { p.Provider = "" }, "provider is empty"},
		{"unknown provider", func(p *Profile) { p.Provider = "gemini" }, `unknown provider "gemini"`},
		{"bad token field", func(p *Profile) { p.MaxTokensField = "max_output_tokens" }, "max_tokens_field"},
		{"two key sources", func(p *Profile) { p.KeySecret, p.KeyEnv = "k", "K" }, "keep one"},
		{"bad secret name", func(p *Profile) { p.KeySecret = "a b" }, "key_secret"},
		{"bad base url", func(p *Profile) { p.BaseURL = "api.openai.com" }, "not an http"},
		{"base url with a newline", func(p *Profile) { p.BaseURL = "http://evil.example\n  safe" }, "not a valid URL"},
		{"base url without host", func(p *Profile) { p.BaseURL = "http:///v1" }, "not a valid URL"},
		{"negative max tokens", func(p *Profile) { p.MaxTokens = -1 }, "max_tokens"},
		{"key_env api key", func(p *Profile) { p.KeyEnv = "OPENAI_API_KEY" }, ""},
		{"key_env token", func(p *Profile) { p.KeyEnv = "hf_token" }, ""},
		{"key_env pat", func(p *Profile) { p.KeyEnv = "GH_PAT" }, ""},
		{"key_env HOME", func(p *Profile) { p.KeyEnv = "HOME" }, "key_env HOME is not an API key variable"},
		{"key_env PATH", func(p *Profile) { p.KeyEnv = "PATH" }, "such as OPENAI_API_KEY"},
		{"key_env LC_ALL", func(p *Profile) { p.KeyEnv = "LC_ALL" }, "not an API key variable"},
		{"key_env XDG", func(p *Profile) { p.KeyEnv = "XDG_CONFIG_HOME" }, "not an API key variable"},
		{"key_env passphrase", func(p *Profile) { p.KeyEnv = "TAI_VAULT_PASSPHRASE" }, "not an API key variable"},
		{"key_env plain", func(p *Profile) { p.KeyEnv = "EDITOR_MODE" }, "does not look like an API key variable"},
		{"key_env syntax", func(p *Profile) { p.KeyEnv = "MY-KEY" }, "not an environment variable name"},
		{"key_env digit", func(p *Profile) { p.KeyEnv = "1_KEY" }, "not an environment variable name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := ok
			tc.edit(&p)
			err := p.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestProfileStore(t *testing.T) {
	s := vaulttest.Open(t)
	if list, err := ListProfiles(s); err != nil || len(list) != 0 {
		t.Fatalf("empty vault lists %v, %v", list, err)
	}
	work := Profile{Name: "work", Provider: ProviderAnthropic, Model: "claude-x", KeySecret: "anthropic-key", System: "Be brief.", Tools: []string{"read_file", "grep"}, MaxTokens: 1000}
	home := Profile{Name: "home", Provider: ProviderOllama}
	for _, p := range []Profile{work, home} {
		if err := SaveProfile(s, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := SaveProfile(s, Profile{Name: "bad", Provider: "x"}); err == nil {
		t.Error("an invalid profile was saved")
	}
	got, err := LoadProfile(s, "work")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != work.Name || got.Model != work.Model || got.KeySecret != work.KeySecret || got.System != work.System || strings.Join(got.Tools, ",") != "read_file,grep" || got.MaxTokens != 1000 {
		t.Errorf("loaded %+v, saved %+v", got, work)
	}
	_, err = LoadProfile(s, "nope")
	if !errors.Is(err, ErrProfileNotFound) || !strings.Contains(err.Error(), "home, work") {
		t.Errorf("missing profile error = %v, want ErrProfileNotFound listing home, work", err)
	}

	if cur, err := CurrentProfileName(s); err != nil || cur != "" {
		t.Fatalf("current = %q, %v; want none", cur, err)
	}
	if err := SetCurrentProfile(s, "nope"); !errors.Is(err, ErrProfileNotFound) {
		t.Errorf("switch to a missing profile: %v", err)
	}
	if err := SetCurrentProfile(s, "work"); err != nil {
		t.Fatal(err)
	}
	if cur, _ := CurrentProfileName(s); cur != "work" {
		t.Errorf("current = %q, want work", cur)
	}
	list, err := ListProfiles(s)
	if err != nil || len(list) != 2 || list[0].Name != "home" || list[1].Name != "work" {
		t.Errorf("list = %+v, %v; want home, work (and not the current marker)", list, err)
	}
	if err := DeleteProfile(s, "work"); err != nil {
		t.Fatal(err)
	}
	if cur, _ := CurrentProfileName(s); cur != "" {
		t.Errorf("deleting the current profile left current = %q", cur)
	}
	if err := DeleteProfile(s, "work"); !errors.Is(err, ErrProfileNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	for _, builtin := range []string{DefaultProfileName, OllamaProfileName} {
		if err := SetCurrentProfile(s, builtin); err != nil {
			t.Errorf("switch to built-in %q: %v", builtin, err)
		}
	}
	if err := SetCurrentProfile(s, ""); err != nil {
		t.Fatal(err)
	}
	if cur, _ := CurrentProfileName(s); cur != "" {
		t.Errorf("forgetting the current profile left %q", cur)
	}
}

func TestEnvProfile(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		ok   bool
		want Profile
	}{
		{"nothing", nil, false, Profile{}},
		{"openai key", map[string]string{"OPENAI_API_KEY": "sk-1"}, true,
			Profile{Name: "default", Provider: ProviderOpenAI, KeyEnv: "OPENAI_API_KEY"}},
		{"openai compatible", map[string]string{"OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1", "TAI_MODEL": "qwen"}, true,
			Profile{Name: "default", Provider: ProviderOpenAI, BaseURL: "http://127.0.0.1:8080/v1", Model: "qwen", KeyEnv: "OPENAI_API_KEY"}},
		{"anthropic key", map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}, true,
			Profile{Name: "default", Provider: ProviderAnthropic, BaseURL: "http://127.0.0.1:9/", KeyEnv: "ANTHROPIC_API_KEY"}},
		{"both: openai wins", map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o", "TAI_MODEL": "m"}, true,
			Profile{Name: "default", Provider: ProviderOpenAI, Model: "m", KeyEnv: "OPENAI_API_KEY"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := EnvProfile(env(tc.env))
			if ok != tc.ok || p.Name != tc.want.Name || p.Provider != tc.want.Provider || p.BaseURL != tc.want.BaseURL || p.Model != tc.want.Model || p.KeyEnv != tc.want.KeyEnv {
				t.Errorf("EnvProfile = %+v, %v; want %+v, %v", p, ok, tc.want, tc.ok)
			}
			if ok {
				if err := p.Validate(); err != nil {
					t.Errorf("env profile is invalid: %v", err)
				}
			}
		})
	}
}

func TestResolveProfile(t *testing.T) {
	withKey := map[string]string{"OPENAI_API_KEY": "sk-1"}
	cases := []struct {
		name     string
		stored   []Profile
		current  string
		ask      string
		env      map[string]string
		nilStore bool
		want     string // name/provider
		err      string
	}{
		{name: "env default", env: withKey, want: "default/openai"},
		{name: "ollama when nothing else", want: "ollama/ollama"},
		{name: "explicit ollama", env: withKey, ask: "ollama", want: "ollama/ollama"},
		{name: "stored default beats env", stored: []Profile{{Name: "default", Provider: ProviderAnthropic, Model: "c", KeyEnv: "K_KEY"}}, env: withKey, want: "default/anthropic"},
		{name: "current beats env", stored: []Profile{{Name: "w", Provider: ProviderAnthropic, Model: "c"}}, current: "w", env: withKey, want: "w/anthropic"},
		{name: "explicit beats current", stored: []Profile{{Name: "w", Provider: ProviderAnthropic, Model: "c"}, {Name: "v", Provider: ProviderOllama}}, current: "w", ask: "v", want: "v/ollama"},
		{name: "current built-in ollama", current: "ollama", env: withKey, want: "ollama/ollama"},
		{name: "unknown name", stored: []Profile{{Name: "w", Provider: ProviderOllama}}, ask: "x", err: `"x" (stored: w)`},
		{name: "bad name", ask: "a b", err: "contains ' '"},
		{name: "no vault: env", nilStore: true, env: withKey, want: "default/openai"},
		{name: "no vault: unknown", nilStore: true, ask: "w", err: "no vault"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s *vault.Store
			if !tc.nilStore {
				s = vaulttest.Open(t)
				for _, p := range tc.stored {
					if err := SaveProfile(s, p); err != nil {
						t.Fatal(err)
					}
				}
				if err := SetCurrentProfile(s, tc.current); err != nil {
					t.Fatal(err)
				}
			}
			p, err := ResolveProfile(s, tc.ask, env(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Name + "/" + p.Provider; got != tc.want {
				t.Errorf("resolved %s, want %s", got, tc.want)
			}
		})
	}
}

func TestNewChatClientKeys(t *testing.T) {
	const secretKey = "sk-from-the-vault-4242"
	const envKey = "sk-from-the-env-1717"
	cases := []struct {
		name    string
		p       Profile
		secret  bool
		env     map[string]string
		wantKey string
		err     string
	}{
		{name: "vault secret", p: Profile{Provider: ProviderOpenAI, KeySecret: "openai-key"}, secret: true, wantKey: secretKey},
		{name: "env variable", p: Profile{Provider: ProviderAnthropic, KeyEnv: "MY_KEY"}, env: map[string]string{"MY_KEY": envKey}, wantKey: envKey},
		{name: "keyless openai-compatible", p: Profile{Provider: ProviderOpenAI}},
		{name: "missing secret", p: Profile{Provider: ProviderOpenAI, KeySecret: "absent"}, err: `no secret "absent"`},
		{name: "missing env", p: Profile{Provider: ProviderOpenAI, KeyEnv: "NOPE_KEY"}, err: "NOPE_KEY"},
		{name: "anthropic needs a key", p: Profile{Provider: ProviderAnthropic}, err: "needs an API key"},
		{name: "invalid profile", p: Profile{Provider: "x"}, err: "unknown provider"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := vaulttest.Open(t)
			if tc.secret {
				if err := s.SecretSet("openai-key", secretKey, nil); err != nil {
					t.Fatal(err)
				}
			}
			var srv *llmtest.Server
			if tc.p.Provider == ProviderAnthropic {
				srv = llmtest.NewAnthropic(t, llmtest.Say("hello"))
			} else {
				srv = llmtest.NewOpenAI(t, llmtest.Say("hello"))
			}
			if tc.wantKey != "" {
				srv.RequireKey(tc.wantKey)
			}
			p := tc.p
			p.Name, p.BaseURL, p.Model = "t", srv.BaseURL, "m"
			cl, err := NewChatClient(p, s, &ClientOptions{Getenv: env(tc.env)})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				if len(srv.Requests()) != 0 {
					t.Error("a request was sent")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp, err := cl.Complete(testCtx(t), userRequest("hi"), nil)
			if err != nil || resp.Message.Content != "hello" {
				t.Fatalf("Complete = %+v, %v", resp, err)
			}
			if tc.wantKey != "" {
				if got := s.Redact("the key is " + tc.wantKey); strings.Contains(got, tc.wantKey) {
					t.Errorf("the key is not registered for redaction: %q", got)
				}
			}
			if tc.wantKey == "" {
				h := srv.Requests()[0].Header
				if h.Get("Authorization") != "" || h.Get("x-api-key") != "" {
					t.Errorf("credentials sent without a key: %v", h)
				}
			}
		})
	}
}

func TestOllamaFallback(t *testing.T) {
	cases := []struct {
		name      string
		models    []string
		taiModel  string
		wantModel string
		err       string
	}{
		{name: "first listed", models: []string{"llama3.2:latest", "qwen3:8b"}, wantModel: "llama3.2:latest"},
		{name: "TAI_MODEL", models: []string{"llama3.2:latest", "qwen3:8b"}, taiModel: "qwen3:8b", wantModel: "qwen3:8b"},
		{name: "TAI_MODEL without tag", models: []string{"llama3.2:latest"}, taiModel: "llama3.2", wantModel: "llama3.2"},
		{name: "TAI_MODEL not pulled", models: []string{"llama3.2:latest"}, taiModel: "mistral", err: "ollama pull mistral"},
		{name: "no models", err: "no model pulled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t)
			srv.SetModels(tc.models...)
			srv.SetRule(func(r llmtest.Request) llmtest.Turn { return llmtest.Say("model " + r.Model) })
			p, err := ResolveProfile(nil, "", env(map[string]string{"TAI_MODEL": tc.taiModel}))
			if err != nil || p.Provider != ProviderOllama {
				t.Fatalf("resolved %+v, %v; want the Ollama fallback", p, err)
			}
			if p.BaseURL != DefaultOllamaBaseURL {
				t.Errorf("fallback base URL %q", p.BaseURL)
			}
			p.BaseURL = srv.BaseURL
			cl, err := NewChatClient(p, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := cl.Complete(testCtx(t), userRequest("hi"), nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "model "+tc.wantModel {
				t.Errorf("answer %q, want the model %q used", resp.Message.Content, tc.wantModel)
			}
			if _, err := cl.Complete(testCtx(t), userRequest("again"), nil); err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("%d completions, want 2", n)
			}
		})
	}
}

func TestNoModelHowTo(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := OllamaProfile(env(nil))
	p.BaseURL = "http://" + addr + "/v1"
	// Building the client must not touch the network: only the first
	// completion probes.
	cl, err := NewChatClient(p, nil, nil)
	if err != nil {
		t.Fatalf("NewChatClient probed at start-up: %v", err)
	}
	_, err = cl.Complete(testCtx(t), userRequest("hi"), nil)
	if !errors.Is(err, ErrNoModel) {
		t.Fatalf("err = %v, want ErrNoModel", err)
	}
	for _, w := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TAI_MODEL", "Ollama", "profile", addr} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("how-to %q does not mention %q", err, w)
		}
	}
}
