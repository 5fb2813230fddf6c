package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"tai/engine/llm"
	"tai/engine/tool"
)

func (e *Engine) profileTools() []tool.Tool {
	return []tool.Tool{
		{
			Name:        "profile_list",
			Description: "List the model profiles (provider, model) and say which one is current.",
			Parameters:  tool.Schema(nil, map[string]any{}),
			Safe:        true,
			Run:         e.profileList,
		},
		{
			Name:        "profile_show",
			Description: "Show one model profile (default: the current one) as JSON; API keys are named, never shown.",
			Parameters: tool.Schema(nil, map[string]any{
				"name": tool.Prop("string", "profile name"),
			}),
			Safe: true,
			Run:  e.profileShow,
		},
		{
			Name: "profile_create",
			Description: "Create or update a model profile: provider (openai, anthropic or ollama), base_url, model, " +
				"where the API key lives (key_secret: a vault secret name, or key_env: an environment variable), a " +
				"system prompt and an optional tool selection. Fields left out keep their stored value. The person " +
				"is always asked to confirm the change.",
			Parameters: tool.Schema([]string{"name"}, map[string]any{
				"name":       tool.Prop("string", "profile name"),
				"provider":   tool.Prop("string", "openai, anthropic or ollama"),
				"base_url":   tool.Prop("string", "API base URL (default: the provider's)"),
				"model":      tool.Prop("string", "model name"),
				"key_secret": tool.Prop("string", "vault secret holding the API key"),
				"key_env":    tool.Prop("string", "environment variable holding the API key"),
				"system":     tool.Prop("string", "system prompt"),
				"tools":      map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "tool names or patterns (mcp_github_*) this profile may use; empty: all"},
				"max_tokens": tool.Prop("integer", "answer token limit (0: provider default)"),
			}),
			Run:     e.profileCreate,
			Decides: true,
		},
		{
			Name: "profile_switch",
			Description: "Switch this session to another model profile (later runs keep the current one). The person " +
				"is always asked to confirm the switch.",
			Parameters: tool.Schema([]string{"name"}, map[string]any{
				"name": tool.Prop("string", "profile name"),
			}),
			Run:     e.profileSwitch,
			Decides: true,
		},
	}
}

func (e *Engine) profileList(ctx context.Context, _ map[string]any) (tool.Result, error) {
	list, err := llm.ListProfiles(e.store)
	if err != nil {
		return tool.ErrorResult("profile_list: %v", err), nil
	}
	cur := e.profileFor(ctx)
	var b strings.Builder
	found := false
	for _, p := range list {
		mark := " "
		if p.Name == cur.Name {
			mark, found = "*", true
		}
		fmt.Fprintf(&b, "%s %s\t%s\t%s\n", mark, p.Name, p.Provider, e.modelOf(p))
	}
	if !found {
		fmt.Fprintf(&b, "* %s\t%s\t%s\t(built in, from the environment)\n", cur.Name, cur.Provider, e.modelOf(cur))
	}
	return tool.TextResult(b.String()), nil
}

// modelOf names p's model: its own, else the one picked for it from the
// provider's list, else says it is yet to be picked.
func (e *Engine) modelOf(p llm.Profile) string {
	switch {
	case p.Model != "":
		return p.Model
	case p.Provider == llm.ProviderOllama:
		return "(the first model Ollama lists)"
	}
	if m := llm.ChosenModel(e.store, p); m != "" {
		return m
	}
	return "(the newest the provider lists, picked on the first turn)"
}

func (e *Engine) profileShow(ctx context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	name := a.Str("name", false)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	p := e.profileFor(ctx)
	if name != "" && name != p.Name {
		var err error
		if p, err = llm.ResolveProfile(e.store, name, e.getenv); err != nil {
			return tool.ErrorResult("profile_show: %v", err), nil
		}
	}
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return tool.ErrorResult("profile_show: %v", err), nil
	}
	return tool.TextResult(string(data)), nil
}

func (e *Engine) profileCreate(ctx context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	name := a.Str("name", true)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	p, err := llm.LoadProfile(e.store, name)
	verb := "updated"
	var old *llm.Profile
	switch {
	case errors.Is(err, llm.ErrProfileNotFound):
		p, verb = llm.Profile{Name: name}, "created"
	case err != nil:
		return tool.ErrorResult("profile_create: %v", err), nil
	default:
		prev := p
		old = &prev
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
			*f.dst = a.Str(f.key, false)
		}
	}
	if _, ok := args["tools"]; ok {
		p.Tools = a.Strings("tools")
	}
	p.MaxTokens = a.Int("max_tokens", p.MaxTokens)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	if err := p.Validate(); err != nil {
		return tool.ErrorResult("profile_create: %v", err), nil
	}
	question := e.profileChangeQuestion(old, p)
	if ok, err := e.approverFor(ctx).Decide(ctx, question); err != nil || !ok {
		return tool.ErrorResult("profile_create: not done: %s", refusal(err)), nil
	}
	if err := e.SaveProfile(p); err != nil {
		return tool.ErrorResult("profile_create: %v", err), nil
	}
	return tool.TextResult(fmt.Sprintf("%s profile %s (%s %s); switch to it with profile_switch", verb, p.Name, p.Provider, p.Model)), nil
}

func (e *Engine) profileSwitch(ctx context.Context, args map[string]any) (tool.Result, error) {
	a := tool.ReadArgs(args)
	name := a.Str("name", true)
	if err := a.Err(); err != nil {
		return tool.ErrorResult("%v", err), nil
	}
	s, noSession := sessionOf(ctx, "profile_switch")
	if noSession != nil {
		return *noSession, nil
	}
	p, err := llm.ResolveProfile(e.store, name, e.getenv)
	if err != nil {
		return tool.ErrorResult("profile_switch: %v", err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The model asks to switch this session to profile %q: %s model %q at %s, API key %s.",
		p.Name, p.Provider, p.Model, llm.HideUserinfo(p.BaseURLOrDefault()), keySourceText(p))
	for _, w := range e.keyWarnings(p) {
		b.WriteString("\n  ! " + w)
	}
	b.WriteString("\nThe switch lasts for this session only. Allow it? Answer yes to allow; anything else refuses.")
	if ok, err := s.approver.Decide(ctx, b.String()); err != nil || !ok {
		return tool.ErrorResult("profile_switch: not done: %s", refusal(err)), nil
	}
	if p, err = s.SwitchProfile(name); err != nil {
		return tool.ErrorResult("profile_switch: %v", err), nil
	}
	return tool.TextResult(fmt.Sprintf("switched this session to profile %s (%s %s)", p.Name, p.Provider, p.Model)), nil
}

// refusal says why a profile change was not made.
func refusal(err error) string {
	if err != nil {
		return fmt.Sprintf("the person must confirm profile changes, and could not be asked (%v); ask them to make the change themselves", err)
	}
	return "the person refused it"
}

// profileChangeQuestion describes a profile change the model asks for:
// what changes and, above all, where an API key would be sent that it was
// not sent before.
func (e *Engine) profileChangeQuestion(old *llm.Profile, p llm.Profile) string {
	var b strings.Builder
	if old == nil {
		fmt.Fprintf(&b, "The model asks to create profile %q: %s model %q at %s, API key %s.", p.Name, p.Provider, p.Model, llm.HideUserinfo(p.BaseURLOrDefault()), keySourceText(p))
	} else {
		fmt.Fprintf(&b, "The model asks to change profile %q:", p.Name)
		diff := []struct{ key, was, now string }{
			{"provider", old.Provider, p.Provider}, {"base_url", llm.HideUserinfo(old.BaseURLOrDefault()), llm.HideUserinfo(p.BaseURLOrDefault())},
			{"model", old.Model, p.Model}, {"API key", keySourceText(*old), keySourceText(p)},
			{"system", old.System, p.System}, {"tools", strings.Join(old.Tools, ","), strings.Join(p.Tools, ",")},
			{"max_tokens", fmt.Sprint(old.MaxTokens), fmt.Sprint(p.MaxTokens)},
		}
		changed := false
		for _, d := range diff {
			if d.was != d.now {
				fmt.Fprintf(&b, "\n  %s: %s -> %s", d.key, shortText(d.was), shortText(d.now))
				changed = true
			}
		}
		if !changed {
			b.WriteString(" (no field changes)")
		}
		if old.BaseURLOrDefault() != p.BaseURLOrDefault() && keySource(p) != "" && keySource(p) == keySource(*old) {
			fmt.Fprintf(&b, "\n  ! the profile keeps its API key (%s), which would then be sent to %s instead of %s",
				keySourceText(p), urlHost(p.BaseURLOrDefault()), urlHost(old.BaseURLOrDefault()))
		}
	}
	for _, w := range e.keyWarnings(p) {
		b.WriteString("\n  ! " + w)
	}
	b.WriteString("\nThe change is saved for later runs. Allow it? Answer yes to allow; anything else refuses.")
	return b.String()
}

// keyWarnings names the other profiles that send p's API key to a host
// other than p's: a profile pointing an existing key somewhere new.
func (e *Engine) keyWarnings(p llm.Profile) []string {
	src := keySource(p)
	if src == "" {
		return nil
	}
	host := urlHost(p.BaseURLOrDefault())
	others, _ := llm.ListProfiles(e.store)
	if env, ok := llm.EnvProfile(e.getenv); ok && !slices.ContainsFunc(others, func(q llm.Profile) bool { return q.Name == env.Name }) {
		others = append(others, env)
	}
	var out []string
	for _, q := range others {
		if q.Name == p.Name || keySource(q) != src || urlHost(q.BaseURLOrDefault()) == host {
			continue
		}
		out = append(out, fmt.Sprintf("the API key %s is the one profile %q sends to %s; it would also be sent to %s",
			keySourceText(p), q.Name, urlHost(q.BaseURLOrDefault()), host))
	}
	return out
}

// keySource identifies where p's API key comes from ("" for none).
func keySource(p llm.Profile) string {
	switch {
	case p.KeySecret != "":
		return "secret:" + p.KeySecret
	case p.KeyEnv != "":
		return "env:" + p.KeyEnv
	}
	return ""
}

func keySourceText(p llm.Profile) string {
	switch {
	case p.KeySecret != "":
		return "from vault secret " + p.KeySecret
	case p.KeyEnv != "":
		return "from environment variable " + p.KeyEnv
	}
	return "none"
}

// urlHost returns the scheme and host (with port) of u, where a key sent
// to it ends up.
func urlHost(u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" {
		return u
	}
	return strings.ToLower(pu.Scheme + "://" + pu.Host) // Host holds no userinfo
}

// shortText shows a value in a question, quoted so that a newline in it
// cannot pass for a line of the question.
func shortText(s string) string {
	if s == "" {
		return "(empty)"
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:77]) + "..."
	}
	return strconv.Quote(s)
}
