package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"tai/mcp/httppolicy"
	"tai/vault/secret"
)

// Retry defaults, used when a RetryPolicy field is zero.
const (
	DefaultRetryAttempts = 4
	DefaultRetryBase     = time.Second
	DefaultRetryMax      = 60 * time.Second
	defaultTimeout       = 10 * time.Minute
	defaultIdleTimeout   = 2 * time.Minute
	maxErrorBody         = 64 << 10
	maxAnswerBody        = 32 << 20
	maxSSEEvent          = 8 << 20
)

// RetryPolicy bounds how a provider retries answers of 429 Too Many
// Requests and 5xx. The zero value means DefaultRetryAttempts attempts,
// exponential backoff from DefaultRetryBase, and no single wait longer than
// DefaultRetryMax; an answer whose Retry-After asks for longer fails at
// once instead of being waited out.
type RetryPolicy struct {
	// Attempts is the total number of tries, the first included; 1 means
	// no retry.
	Attempts int
	// Base is the wait after the first failure; it doubles each time.
	Base time.Duration
	// Max caps every wait; a server's Retry-After beyond it ends the
	// retries with an error naming the wait asked for.
	Max time.Duration
	// Sleep waits d or until ctx is done; nil means a timer bounded by ctx.
	// Tests inject a recorder so that nothing really sleeps.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now gives the time against which an HTTP-date Retry-After is read;
	// nil means time.Now.
	Now func() time.Time
}

func (p RetryPolicy) attempts() int {
	if p.Attempts <= 0 {
		return DefaultRetryAttempts
	}
	return p.Attempts
}

// Delay returns the wait before retry number n (1 for the first retry):
// the Retry-After header value when it parses (seconds or an HTTP date),
// else Base·2^(n-1); either way at most Max. (A client does not retry at
// all when Retry-After asks for more than Max: it fails at once, saying
// how long the API asked to wait.)
func (p RetryPolicy) Delay(n int, retryAfter string) time.Duration {
	base, maxWait := p.Base, p.Max
	if base <= 0 {
		base = DefaultRetryBase
	}
	if maxWait <= 0 {
		maxWait = DefaultRetryMax
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	d, ok := ParseRetryAfter(retryAfter, now())
	if !ok {
		d = base
		for i := 1; i < n && d < maxWait; i++ {
			d *= 2
		}
	}
	return min(d, maxWait)
}

func (p RetryPolicy) maxWait() time.Duration {
	if p.Max <= 0 {
		return DefaultRetryMax
	}
	return p.Max
}

// tooLong reports whether retryAfter asks for a wait beyond Max, and that
// wait: such an answer is not waited out (nor silently shortened) but
// reported at once.
func (p RetryPolicy) tooLong(retryAfter string) (time.Duration, bool) {
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	d, ok := ParseRetryAfter(retryAfter, now())
	return d, ok && d > p.maxWait()
}

func (p RetryPolicy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ParseRetryAfter reads a Retry-After header value: delay-seconds or an
// HTTP date (then measured from now; a past date means no wait). ok is false
// when v is empty or neither form.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 || secs != secs {
			return 0, false
		}
		if secs > 1e6 {
			secs = 1e6
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// ProviderConfig configures one provider client.
type ProviderConfig struct {
	// Provider names the provider in errors ("openai", "anthropic",
	// "ollama"); the constructors fill it when empty.
	Provider string
	// BaseURL is the API root: for OpenAI-compatible servers it includes
	// /v1 (https://api.openai.com/v1), for Anthropic it does not
	// (https://api.anthropic.com). Empty means the provider's default.
	BaseURL string
	// Model is sent with every request.
	Model string
	// APIKey authenticates; empty sends no credentials (local servers).
	APIKey string
	// MaxTokens caps the answer when a Request does not; 0 means the
	// provider's default (Anthropic requires one: 8192 then).
	MaxTokens int
	// TokenField names the OpenAI-compatible request field that carries
	// the cap, FieldMaxTokens or FieldMaxCompletionTokens; empty means
	// the one the model takes (see Profile.MaxTokensField).
	TokenField string
	// HTTPClient sends requests; nil means a client without overall
	// timeout.
	HTTPClient *http.Client
	// Retry bounds retries of 429 and 5xx answers.
	Retry RetryPolicy
	// Timeout bounds one attempt, request to last byte; 0 means 10 minutes.
	Timeout time.Duration
	// IdleTimeout bounds the silence inside a streamed answer; 0 means
	// 2 minutes.
	IdleTimeout time.Duration
	// OnRetry, when set, is told of every retry before its wait (a
	// WithRetryNotice callback in the request's context wins).
	OnRetry func(RetryNotice)
	// NoImages sends no image or audio parts: the model sees their
	// labels only (Profile.Images false).
	NoImages bool
}

// APIError is a provider's answer that was not a completion, after the
// retries the policy allowed. Its text names the provider, the model, the
// HTTP status and what the API said, never the key.
type APIError struct {
	Provider string
	Model    string
	Status   int    // HTTP status; 0 for an error event inside a stream
	Type     string // the API's error type or code, when given
	Message  string // the API's message, key redacted
	Attempts int    // tries made
	// Available lists the models the key can use, chat models and newest
	// first, when the API said the model asked for is not served
	// (ModelGone) and the provider lists its models.
	Available []string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s model %q: ", e.Provider, e.Model)
	if e.Status != 0 {
		fmt.Fprintf(&b, "HTTP %d %s", e.Status, http.StatusText(e.Status))
	} else {
		b.WriteString("error in stream")
	}
	if e.Type != "" {
		fmt.Fprintf(&b, " (%s)", e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (gave up after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Retryable reports whether the error is one a retry may cure: 429, 5xx,
// or an overload reported inside a stream.
func (e *APIError) Retryable() bool {
	switch {
	case e.Status == http.StatusTooManyRequests, e.Status >= 500:
		return true
	case e.Status == 0:
		t := strings.ToLower(e.Type)
		return strings.Contains(t, "overloaded") || strings.Contains(t, "rate_limit") || strings.Contains(t, "api_error") || strings.Contains(t, "server_error")
	}
	return false
}

// streamError marks a failure while reading an answer; retry is true when
// nothing of the answer was handed to the caller yet, so a new attempt
// cannot duplicate text.
type streamError struct {
	err   error
	retry bool
}

func (e *streamError) Error() string { return e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

var errIdle = errors.New("stream idle")

// call is one provider request: the body to POST, how to add headers, how to
// read an error body, and how to read a 200 answer.
type call struct {
	url        string
	body       []byte
	header     func(h http.Header)
	parseError func(status int, body []byte) (typ, msg string)
	read       func(ctx context.Context, resp *http.Response) error
}

// wireAPI is what differs between the providers' completion endpoints.
type wireAPI struct {
	path       string              // appended to the base URL
	auth       func(h http.Header) // sets the key (and any version) headers
	parseError func(status int, body []byte) (typ, msg string)
	readWhole  func(body io.Reader) (Response, error)
	readStream func(body io.Reader, onText func(string)) (Response, error)
}

// complete encodes payload, posts it to api.path with retries, and reads the
// answer as an event stream when onText is set, else whole.
func (cfg *ProviderConfig) complete(ctx context.Context, api wireAPI, payload any, onText func(string)) (Response, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return Response{}, fmt.Errorf("%s model %q: encode request: %v", cfg.Provider, cfg.Model, err)
	}
	stream := onText != nil
	var resp Response
	err = cfg.do(ctx, call{
		url:  cfg.BaseURL + api.path,
		body: body,
		header: func(h http.Header) {
			api.auth(h)
			if stream {
				h.Set("Accept", "text/event-stream")
			}
		},
		parseError: api.parseError,
		read: func(ctx context.Context, r *http.Response) error {
			var err error
			if !stream {
				resp, err = api.readWhole(r.Body)
				return err
			}
			// Some OpenAI-compatible servers ignore "stream": they answer
			// with the whole completion as JSON, which is read as such.
			switch httppolicy.MediaType(r.Header.Get("Content-Type")) {
			case "text/event-stream", "":
				resp, err = api.readStream(r.Body, onText)
			case "application/json":
				if resp, err = api.readWhole(r.Body); err == nil && resp.Message.Content != "" {
					onText(resp.Message.Content)
				}
			default:
				err = fmt.Errorf("%s model %q: the server answered with Content-Type %s, expected text/event-stream (a streamed answer) or application/json: check the base URL %s",
					cfg.Provider, cfg.Model, r.Header.Get("Content-Type"), cfg.BaseURL)
			}
			return err
		},
	})
	if err != nil && ModelGone(err) {
		cfg.nameModels(ctx, err)
	}
	return resp, err
}

// nameModels adds to err, a provider saying the model is not served, the
// models the key can use and how to pick one, when the provider lists
// them.
func (cfg *ProviderConfig) nameModels(ctx context.Context, err error) {
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), modelGoneTimeout)
	defer cancel()
	models, lerr := listModels(ctx, cfg.HTTPClient, cfg.Provider, cfg.BaseURL, cfg.APIKey)
	if lerr != nil || len(models) == 0 {
		return
	}
	apiErr.Available = modelNames(models)
	const shown = 8
	names := apiErr.Available
	more := ""
	if len(names) > shown {
		names, more = names[:shown], fmt.Sprintf(" and %d more", len(apiErr.Available)-shown)
	}
	msg := strings.TrimSpace(strings.TrimSuffix(apiErr.Message, cfg.modelHint()))
	apiErr.Message = cfg.redact(fmt.Sprintf("%s (the key can use %s%s: /model NAME picks one, TAI_MODEL or the profile's model keeps it)",
		msg, strings.Join(names, ", "), more))
}

// modelNames returns the ids of models, chat models first, newest first.
func modelNames(models []ModelInfo) []string {
	sorted := slices.Clone(models)
	slices.SortStableFunc(sorted, func(a, b ModelInfo) int {
		if ca, cb := chatModel(a.ID), chatModel(b.ID); ca != cb {
			if ca {
				return -1
			}
			return 1
		}
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	out := make([]string, len(sorted))
	for i, m := range sorted {
		out[i] = m.ID
	}
	return out
}

// do runs c with retries, timeouts and key redaction.
func (cfg *ProviderConfig) do(ctx context.Context, c call) error {
	// The key and the conversation go to the configured origin only.
	hc := httppolicy.FollowSameOrigin(cfg.HTTPClient)
	attempts := cfg.Retry.attempts()
	for n := 1; ; n++ {
		retryAfter, err := cfg.attempt(ctx, hc, c)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s model %q: %w", cfg.Provider, cfg.Model, ctx.Err())
		}
		var apiErr *APIError
		var sErr *streamError
		retry := false
		switch {
		case errors.As(err, &sErr):
			retry = sErr.retry
			if errors.As(err, &apiErr) {
				retry = retry && apiErr.Retryable()
			}
		case errors.As(err, &apiErr):
			retry = apiErr.Retryable()
		case errors.Is(err, httppolicy.ErrCrossOriginRedirect):
			retry = false // the same answer every time
		default:
			retry = true // transport failure: connection refused or reset
		}
		if !retry || n >= attempts {
			if apiErr != nil {
				apiErr.Attempts = n
				if sErr == nil {
					return apiErr
				}
			}
			return err
		}
		if asked, long := cfg.Retry.tooLong(retryAfter); long {
			reason := "the API is unavailable"
			if apiErr != nil && apiErr.Status == http.StatusTooManyRequests {
				reason = "rate limited"
			}
			if apiErr != nil {
				apiErr.Attempts = n
			}
			return fmt.Errorf("%s model %q: %s; the API asks to wait %v, longer than tai waits between tries (%v): try again later\n(%w)",
				cfg.Provider, cfg.Model, reason, asked, cfg.Retry.maxWait(), err)
		}
		wait := cfg.Retry.Delay(n, retryAfter)
		if notify := retryNotifier(ctx, cfg.OnRetry); notify != nil {
			notice := RetryNotice{Provider: cfg.Provider, Model: cfg.Model, Reason: cfg.retryReason(err), Wait: wait, Attempt: n + 1, Attempts: attempts}
			if apiErr != nil {
				notice.Status = apiErr.Status
			}
			notify(notice)
		}
		if err := cfg.Retry.sleep(ctx, wait); err != nil {
			return fmt.Errorf("%s model %q: %w", cfg.Provider, cfg.Model, err)
		}
	}
}

// attempt makes one try. It returns the Retry-After header of a failed
// answer.
func (cfg *ProviderConfig) attempt(ctx context.Context, hc *http.Client, c call) (string, error) {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(c.body))
	if err != nil {
		return "", fmt.Errorf("%s model %q: bad base URL %q: %v", cfg.Provider, cfg.Model, HideUserinfo(cfg.BaseURL), err)
	}
	req.Header.Set("Content-Type", "application/json")
	c.header(req.Header)
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return "", fmt.Errorf("%s model %q: no answer within %v", cfg.Provider, cfg.Model, timeout)
		}
		if errors.Is(err, httppolicy.ErrCrossOriginRedirect) {
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err // url.Error repeats the new URL, its user name included
			}
			return "", fmt.Errorf("%s model %q: %w", cfg.Provider, cfg.Model, err)
		}
		return "", fmt.Errorf("%s model %q: %s", cfg.Provider, cfg.Model, cfg.redact(transportError(err)))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		typ, msg := c.parseError(resp.StatusCode, data)
		if resp.StatusCode == http.StatusNotFound {
			msg = strings.TrimSpace(msg + " " + cfg.notFoundHint(c.url, data))
		}
		return retryAfter(resp.Header), &APIError{
			Provider: cfg.Provider, Model: cfg.Model, Status: resp.StatusCode,
			Type: cfg.redact(typ), Message: cfg.redact(msg), Attempts: 1,
		}
	}
	idle := cfg.IdleTimeout
	if idle <= 0 {
		idle = defaultIdleTimeout
	}
	body := newIdleReader(resp.Body, idle, func() { cancel(errIdle) })
	defer body.Close()
	resp.Body = body
	err = c.read(ctx, resp)
	if err != nil && context.Cause(ctx) == errIdle {
		err = &streamError{err: fmt.Errorf("%s model %q: the answer stalled: no data for %v", cfg.Provider, cfg.Model, idle), retry: errorRetry(err)}
	} else if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = &streamError{err: fmt.Errorf("%s model %q: the answer took longer than %v", cfg.Provider, cfg.Model, timeout), retry: false}
	}
	return "", err
}

// notFoundHint says what to check after a 404. An API error object that
// speaks of the model means the endpoint exists and does not serve that
// model; anything else (an HTML page, a bare "404 page not found", an
// API's "Invalid URL") means the URL reached no completion endpoint.
func (cfg *ProviderConfig) notFoundHint(url string, body []byte) string {
	if apiErrorBody(body) && strings.Contains(strings.ToLower(string(body)), "model") {
		return cfg.modelHint()
	}
	return fmt.Sprintf("(POST %s: check the base URL; %s)", HideUserinfo(url), providerOf(cfg.Provider).baseURLHint)
}

// modelHint is what a 404 about the model says when the provider's list
// is not at hand.
func (cfg *ProviderConfig) modelHint() string {
	return fmt.Sprintf("(check the model name %q: set TAI_MODEL or the profile's model to one this API serves)", cfg.Model)
}

// apiErrorBody reports whether body is an API's JSON error object
// (OpenAI's and Anthropic's {"error": …}, vLLM's {"object": "error",
// "message": …}, FastAPI's {"detail": …}).
func apiErrorBody(body []byte) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return false
	}
	for _, k := range []string{"error", "message", "detail"} {
		if _, ok := obj[k]; ok {
			return true
		}
	}
	return false
}

// retryReason says in a few words why a try failed, for a RetryNotice.
func (cfg *ProviderConfig) retryReason(err error) string {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		switch {
		case apiErr.Status == http.StatusTooManyRequests:
			return "rate limited (429)"
		case apiErr.Status >= 500:
			return fmt.Sprintf("server error (%d)", apiErr.Status)
		case apiErr.Type != "":
			return "the API reported " + apiErr.Type
		}
		return "the API reported an error"
	}
	msg := err.Error()
	prefix := fmt.Sprintf("%s model %q: ", cfg.Provider, cfg.Model)
	return cfg.redact(strings.TrimPrefix(msg, prefix))
}

// retryAfter returns the wait a failed answer asks for: Retry-After, or
// OpenAI's retry-after-ms converted to seconds.
func retryAfter(h http.Header) string {
	if v := h.Get("Retry-After"); v != "" {
		return v
	}
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms >= 0 {
		return strconv.FormatFloat(ms/1000, 'f', 3, 64)
	}
	return ""
}

func errorRetry(err error) bool {
	var s *streamError
	return errors.As(err, &s) && s.retry
}

// transportError shortens a client error to its cause (url.Error repeats
// the method and URL).
func transportError(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, "\": "); i >= 0 {
		return msg[i+3:]
	}
	return msg
}

// redact hides the API key in s (an error text that might quote a URL or
// a request), as the vault hides its secrets.
func (cfg *ProviderConfig) redact(s string) string { return secret.Hide(s, cfg.APIKey) }

// idleReader cancels the attempt when no Read returns within idle.
type idleReader struct {
	r     io.ReadCloser
	idle  time.Duration
	timer *time.Timer
	once  sync.Once
}

func newIdleReader(r io.ReadCloser, idle time.Duration, onIdle func()) *idleReader {
	return &idleReader{r: r, idle: idle, timer: time.AfterFunc(idle, onIdle)}
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.timer.Reset(r.idle)
	}
	return n, err
}

func (r *idleReader) Close() error {
	r.once.Do(func() { r.timer.Stop() })
	return r.r.Close()
}

func limitReader(r io.Reader, n int64) io.Reader { return io.LimitReader(r, n) }
