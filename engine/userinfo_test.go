package engine

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"tai/engine/llm"
	"tai/engine/llm/llmtest"
	"tai/engine/tool"
)

// TestBaseURLUserinfoNeverShows: a base URL with user:password@ reaches
// neither an error (a 404, a dead port, a bad profile) nor, through a tool
// result that repeats it, the next request to the model.
func TestBaseURLUserinfoNeverShows(t *testing.T) {
	const user, pass = "url-user-name", "url-pass-word-1234"
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	for _, base := range []string{notFound.URL + "/v1", dead + "/v1"} {
		withInfo := strings.Replace(base, "http://", "http://"+user+":"+pass+"@", 1)
		e := fakeProfileEngine(t, llm.ProviderOpenAI, withInfo, &Options{Mode: tool.Yolo, Client: &llm.ClientOptions{Retry: llm.RetryPolicy{Attempts: 1}}})
		_, err := newSession(t, e).NewAgent(nil).RunTurn(turnCtx(t), "hello", nil)
		if err == nil {
			t.Fatalf("a turn against %s succeeded", base)
		}
		if strings.Contains(err.Error(), pass) || strings.Contains(err.Error(), user) {
			t.Errorf("error shows the base URL's userinfo: %v", err)
		}
	}
	bad := llm.Profile{Name: "bad", Provider: llm.ProviderOpenAI, Model: "m", BaseURL: "http://" + user + ":" + pass + "@host /v1"}
	if err := bad.Validate(); err == nil || strings.Contains(err.Error(), pass) {
		t.Errorf("Validate: %v", err)
	}

	// A command that repeats the URL (here from the environment).
	srv := llmtest.NewOpenAI(t, llmtest.Calls(llmtest.Call("shell", `{"command":"echo \"$SHOWN_URL\""}`)), llmtest.Say("ok"))
	withInfo := strings.Replace(srv.BaseURL, "http://", "http://"+user+":"+pass+"@", 1)
	t.Setenv("SHOWN_URL", withInfo)
	e := fakeProfileEngine(t, llm.ProviderOpenAI, withInfo, &Options{Mode: tool.Yolo})
	if _, err := newSession(t, e).NewAgent(nil).RunTurn(turnCtx(t), "show it", nil); err != nil {
		t.Fatal(err)
	}
	for i, r := range srv.Requests() {
		if strings.Contains(string(r.Body), pass) || strings.Contains(string(r.Body), user) {
			t.Errorf("request %d to the model carries the base URL's userinfo:\n%s", i, r.Body)
		}
	}
}
