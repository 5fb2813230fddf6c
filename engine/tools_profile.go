package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

func (e *Engine) profileTools() []Tool {
	return []Tool{
		{
			Name:        "profile_list",
			Description: "List the model profiles (provider, model) and say which one is current.",
			Parameters:  schema(nil, map[string]any{}),
			Safe:        true,
			Run:         e.profileList,
		},
		{
			Name:        "profile_show",
			Description: "Show one model profile (default: the current one) as JSON; API keys are named, never shown.",
			Parameters: schema(nil, map[string]any{
				"name": prop("string", "profile name"),
			}),
			Safe: true,
			Run:  e.profileShow,
		},
		{
			Name: "profile_create",
			Description: "Create or update a model profile: provider (openai, anthropic or ollama), base_url, model, " +
				"where the API key lives (key_secret: a vault secret name, or key_env: an environment variable), a " +
				"system prompt and an optional tool selection. Fields left out keep their stored value.",
			Parameters: schema([]string{"name"}, map[string]any{
				"name":       prop("string", "profile name"),
				"provider":   prop("string", "openai, anthropic or ollama"),
				"base_url":   prop("string", "API base URL (default: the provider's)"),
				"model":      prop("string", "model name"),
				"key_secret": prop("string", "vault secret holding the API key"),
				"key_env":    prop("string", "environment variable holding the API key"),
				"system":     prop("string", "system prompt"),
				"tools":      map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "tool names or patterns (mcp_github_*) this profile may use; empty: all"},
				"max_tokens": prop("integer", "answer token limit (0: provider default)"),
			}),
			Run: e.profileCreate,
		},
		{
			Name:        "profile_switch",
			Description: "Switch to another model profile; it stays current for later runs too.",
			Parameters: schema([]string{"name"}, map[string]any{
				"name": prop("string", "profile name"),
			}),
			Run: e.profileSwitch,
		},
	}
}

func (e *Engine) profileList(context.Context, map[string]any) (Result, error) {
	list, err := ListProfiles(e.store)
	if err != nil {
		return ErrorResult("profile_list: %v", err), nil
	}
	cur := e.Profile()
	var b strings.Builder
	found := false
	for _, p := range list {
		mark := " "
		if p.Name == cur.Name {
			mark, found = "*", true
		}
		fmt.Fprintf(&b, "%s %s\t%s\t%s\n", mark, p.Name, p.Provider, p.Model)
	}
	if !found {
		fmt.Fprintf(&b, "* %s\t%s\t%s\t(built in, from the environment)\n", cur.Name, cur.Provider, cur.Model)
	}
	return TextResult(b.String()), nil
}

func (e *Engine) profileShow(_ context.Context, args map[string]any) (Result, error) {
	a := readArgs(args)
	name := a.str("name", false)
	if err := a.err(); err != nil {
		return ErrorResult("%v", err), nil
	}
	p := e.Profile()
	if name != "" && name != p.Name {
		var err error
		if p, err = ResolveProfile(e.store, name, e.getenv); err != nil {
			return ErrorResult("profile_show: %v", err), nil
		}
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return ErrorResult("profile_show: %v", err), nil
	}
	return TextResult(string(data)), nil
}

func (e *Engine) profileCreate(_ context.Context, args map[string]any) (Result, error) {
	a := readArgs(args)
	name := a.str("name", true)
	if err := a.err(); err != nil {
		return ErrorResult("%v", err), nil
	}
	p, err := LoadProfile(e.store, name)
	verb := "updated"
	switch {
	case errors.Is(err, ErrProfileNotFound):
		p, verb = Profile{Name: name}, "created"
	case err != nil:
		return ErrorResult("profile_create: %v", err), nil
	}
	fields := []struct {
		key string
		dst *string
	}{
		{"provider", &p.Provider}, {"base_url", &p.BaseURL}, {"model", &p.Model},
		{"key_secret", &p.KeySecret}, {"key_env", &p.KeyEnv}, {"system", &p.System},
	}
	for _, f := range fields {
		if _, ok := args[f.key]; ok {
			*f.dst = a.str(f.key, false)
		}
	}
	if _, ok := args["tools"]; ok {
		p.Tools = a.strings("tools")
	}
	p.MaxTokens = a.int("max_tokens", p.MaxTokens)
	if err := a.err(); err != nil {
		return ErrorResult("%v", err), nil
	}
	if err := e.SaveProfile(p); err != nil {
		return ErrorResult("profile_create: %v", err), nil
	}
	return TextResult(fmt.Sprintf("%s profile %s (%s %s); switch to it with profile_switch", verb, p.Name, p.Provider, p.Model)), nil
}

func (e *Engine) profileSwitch(_ context.Context, args map[string]any) (Result, error) {
	a := readArgs(args)
	name := a.str("name", true)
	if err := a.err(); err != nil {
		return ErrorResult("%v", err), nil
	}
	p, err := e.UseProfile(name)
	if err != nil {
		return ErrorResult("profile_switch: %v", err), nil
	}
	return TextResult(fmt.Sprintf("switched to profile %s (%s %s)", p.Name, p.Provider, p.Model)), nil
}
