package engine

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
	"tai/mcp/httppolicy"
)

// TestModelRedirectsStayInTheOrigin: a model base URL that answers with a
// redirect to another origin fails at once (no retries) with an error
// naming both URLs; the other origin never sees the key or the
// conversation. A same-origin redirect is followed.
func TestModelRedirectsStayInTheOrigin(t *testing.T) {
	for _, p := range fakeProviders {
		for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
			t.Run(p.name+"/"+http.StatusText(status), func(t *testing.T) {
				var elsewhere atomic.Int32
				other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					elsewhere.Add(1)
					http.Error(w, "never", http.StatusTeapot)
				}))
				defer other.Close()
				var asked atomic.Int32
				redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					asked.Add(1)
					http.Redirect(w, r, other.URL+r.URL.Path, status)
				}))
				defer redirecting.Close()
				base := "http://user:pw-in-base-url@" + strings.TrimPrefix(redirecting.URL, "http://") + "/v1"
				e := fakeProfileEngine(t, p.name, base, &Options{Mode: tool.Yolo, Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 3}}})
				_, err := newSession(t, e).NewAgent(nil).RunTurn(turnCtx(t), "hello", nil)
				if err == nil {
					t.Fatal("a turn through a cross-origin redirect succeeded")
				}
				if !errors.Is(err, httppolicy.ErrCrossOriginRedirect) {
					t.Errorf("error does not wrap ErrCrossOriginRedirect: %v", err)
				}
				msg := err.Error()
				if !strings.Contains(msg, redirecting.URL) || !strings.Contains(msg, other.URL) {
					t.Errorf("error does not name both URLs: %v", err)
				}
				if strings.Contains(msg, "pw-in-base-url") || strings.Contains(msg, "sk-fake-model-key-123") {
					t.Errorf("error shows a credential: %v", err)
				}
				if n := elsewhere.Load(); n != 0 {
					t.Errorf("the other origin got %d requests", n)
				}
				if n := asked.Load(); n != 1 {
					t.Errorf("the redirecting server was asked %d times, want 1 (no retries)", n)
				}
			})
		}
	}
	t.Run("same origin", func(t *testing.T) {
		srv := llmtest.NewOpenAI(t, llmtest.Say("followed"))
		target, err := url.Parse(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		mux.Handle("/v1/", httputil.NewSingleHostReverseProxy(target))
		mux.HandleFunc("/old/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/v1/"+strings.TrimPrefix(r.URL.Path, "/old/v1/"), http.StatusPermanentRedirect)
		})
		front := httptest.NewServer(mux)
		defer front.Close()
		e := fakeProfileEngine(t, llm.ProviderOpenAI, front.URL+"/old/v1", &Options{Mode: tool.Yolo})
		turn, err := newSession(t, e).NewAgent(nil).RunTurn(turnCtx(t), "hello", nil)
		if err != nil || turn.Text != "followed" {
			t.Fatalf("turn %+v, %v", turn, err)
		}
	})
}
