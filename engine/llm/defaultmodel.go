package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"tai/vault"
)

// DefaultModelFamilies returns the model families a profile without a
// model picks from, in order of preference, for provider: the newest
// model of the first family the provider lists is used (see PickModel).
// tai.model_families changes them.
func DefaultModelFamilies(provider string) []string {
	if !known(provider) {
		return nil
	}
	return slices.Clone(providerOf(provider).families)
}

// notChat are words of model ids that name models chat completions do not
// serve (speech, images, embeddings, search, the Responses API's codex),
// so PickModel never picks them.
var notChat = []string{
	"audio", "codex", "computer", "dall", "embed", "embedding", "image", "moderation", "realtime",
	"research", "search", "transcribe", "tts", "whisper", "instruct", "babbage", "davinci",
}

// idWords splits a model id into its words: the part after any "vendor/"
// prefix, split at '-', '_', ':' and '.'.
func idWords(id string) []string {
	id = strings.ToLower(id)
	if i := strings.LastIndex(id, "/"); i >= 0 {
		id = id[i+1:]
	}
	return strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' || r == ':' || r == '.' })
}

// chatModel reports whether id names a model chat completions serve: none
// of its words is in notChat.
func chatModel(id string) bool {
	return !slices.ContainsFunc(idWords(id), func(w string) bool { return slices.Contains(notChat, w) })
}

// PickModel returns the model to use when none is named: the newest (by
// Created; an equal date prefers the shorter id, an alias over a dated
// snapshot) of the first of families that any listed chat model belongs
// to, a family being one word of the id ("sonnet" in
// claude-sonnet-5-20261001). With no family listed, a list of one model
// gives that model (a local server serving one). ok is false when nothing
// fits.
func PickModel(models []ModelInfo, families []string) (model, family string, ok bool) {
	var chat []ModelInfo
	for _, m := range models {
		if chatModel(m.ID) {
			chat = append(chat, m)
		}
	}
	for _, f := range families {
		f = strings.ToLower(strings.TrimSpace(f))
		var best *ModelInfo
		for i, m := range chat {
			if !slices.Contains(idWords(m.ID), f) {
				continue
			}
			if best == nil || m.Created.After(best.Created) ||
				m.Created.Equal(best.Created) && (len(m.ID) < len(best.ID) || len(m.ID) == len(best.ID) && m.ID < best.ID) {
				best = &chat[i]
			}
		}
		if best != nil {
			return best.ID, f, true
		}
	}
	if len(models) == 1 {
		return models[0].ID, "", true
	}
	return "", "", false
}

// ModelChoice says which model a profile without one was given.
type ModelChoice struct {
	Profile  string
	Provider string
	Model    string
	// Family is the family it was picked from ("" when the server lists
	// only that model).
	Family string
}

// String renders c for a person, in one line, the fix first.
func (c ModelChoice) String() string {
	pick := "/model NAME or TAI_MODEL picks another"
	if c.Family == "" {
		return fmt.Sprintf("no model named: using %s, the one model the server lists; %s", c.Model, pick)
	}
	return fmt.Sprintf("no model named: using %s, the newest %s the key can use; %s", c.Model, c.Family, pick)
}

// chosenKey is the reserved profiles-table row keeping the models picked
// for profiles without one, by provider and base URL.
const chosenKey = ".models"

func chosenSlot(provider, baseURL string) string { return provider + " " + baseURL }

// ChosenModel returns the model picked earlier for p when p names none
// (see PickModel), or "".
func ChosenModel(s *vault.Store, p Profile) string {
	if s == nil || p.Model != "" {
		return ""
	}
	return readChosen(s)[chosenSlot(p.Provider, p.BaseURLOrDefault())]
}

func readChosen(s *vault.Store) map[string]string {
	out := map[string]string{}
	if data, err := s.ProfileGet(chosenKey); err == nil {
		_ = json.Unmarshal(data, &out)
	}
	return out
}

// keepChosen remembers model for slot ("" forgets it).
func keepChosen(s *vault.Store, slot, model string) error {
	all := readChosen(s)
	if model == "" {
		delete(all, slot)
	} else {
		all[slot] = model
	}
	data, _ := json.Marshal(all)
	return s.ProfilePut(chosenKey, data)
}

// fallbackModel is what a profile without a model tries when its
// provider's list cannot be had: the model tai has always used there.
func fallbackModel(provider string) string {
	return providerOf(provider).fallbackModel
}

// autoModelClient is the client of a profile that names no model: on first
// use it takes the model picked earlier (kept in the vault), else asks the
// provider's list once and picks one (PickModel), keeps it and says which.
// A kept model the provider no longer serves is forgotten and picked again.
type autoModelClient struct {
	cfg      ProviderConfig
	profile  string
	store    *vault.Store
	families func(provider string) []string
	notify   func(ModelChoice)

	mu     sync.Mutex
	client ChatClient
	kept   bool // the model came from the vault
}

func (c *autoModelClient) slot() string { return chosenSlot(c.cfg.Provider, c.cfg.BaseURL) }

func (c *autoModelClient) Complete(ctx context.Context, req Request, onText func(string)) (Response, error) {
	cl, kept := c.ready(ctx)
	resp, err := cl.Complete(ctx, req, onText)
	if err == nil || !kept || !ModelGone(err) {
		return resp, err
	}
	// The model kept from an earlier pick is gone: pick again, once.
	c.mu.Lock()
	if c.client == cl {
		c.client = nil
		if c.store != nil {
			_ = keepChosen(c.store, c.slot(), "")
		}
	}
	c.mu.Unlock()
	cl, _ = c.ready(ctx)
	return cl.Complete(ctx, req, onText)
}

// ready returns the client, picking its model on first use.
func (c *autoModelClient) ready(ctx context.Context) (ChatClient, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client != nil {
		return c.client, c.kept
	}
	cfg := c.cfg
	if c.store != nil {
		if m := readChosen(c.store)[c.slot()]; m != "" {
			cfg.Model = m
			c.client, c.kept = c.build(cfg), true
			return c.client, true
		}
	}
	families := DefaultModelFamilies(cfg.Provider)
	if c.families != nil {
		families = c.families(cfg.Provider)
	}
	// Offline, or a server without a list or without a model of the
	// families: what tai did before it read lists, and nothing to say
	// unless it fails (then the error says it).
	cfg.Model = fallbackModel(cfg.Provider)
	models, err := listModels(ctx, cfg.HTTPClient, cfg.Provider, cfg.BaseURL, cfg.APIKey)
	if err == nil {
		if model, family, ok := PickModel(models, families); ok {
			cfg.Model = model
			if c.store != nil {
				_ = keepChosen(c.store, c.slot(), model)
			}
			if notify := modelNotifier(ctx, c.notify); notify != nil {
				notify(ModelChoice{Profile: c.profile, Provider: cfg.Provider, Model: model, Family: family})
			}
		}
	}
	c.client, c.kept = c.build(cfg), false
	return c.client, false
}

func (c *autoModelClient) build(cfg ProviderConfig) ChatClient {
	return providerOf(cfg.Provider).client(cfg)
}

// ModelGone reports whether err is a provider saying the model asked for
// does not exist, is not available to the key, or was retired.
func ModelGone(err error) bool {
	var e *APIError
	if !errors.As(err, &e) {
		return false
	}
	switch e.Status {
	case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
	default:
		return false
	}
	text := strings.ToLower(e.Type + " " + e.Message)
	if strings.Contains(text, "model_not_found") {
		return true
	}
	// A parameter the model refuses ("'max_tokens' is not supported with
	// this model") is not the model being gone.
	if !strings.Contains(text, "model") || strings.Contains(text, "param") {
		return false
	}
	for _, w := range []string{"not found", "not_found", "does not exist", "retired", "deprecated", "no longer", "unknown model", "invalid model"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return false
}

// modelGoneTimeout bounds the model list asked for after a model was not
// found.
const modelGoneTimeout = 5 * time.Second
