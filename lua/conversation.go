package lua

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"tai/engine/llm"
	"tai/vault"
)

// openConversation installs what the REPL needs to keep, show and change
// a conversation:
//
//	tai.chat_history([opts]) -> {{role=, content=, tool_calls=, tool_call_id=,
//	        name=, is_error=}, …}     the conversation tai.chat keeps for
//	                                  opts (profile, tools, system), without
//	                                  the system prompt
//	tai.chat_restore(messages [, opts]) -> true | nil, err
//	                                  replaces that conversation
//	tai.conversations.save{id=, dir=, title=, turns=, profile=, messages=} -> id | nil, err
//	tai.conversations.list([n [, dir]]) -> {{id=, created=, updated=, dir=,
//	        title=, turns=, profile=}, …}   newest first; times in Unix seconds
//	tai.conversations.get(id) -> {…, messages=} | nil, err
//	tai.conversations.delete(id) -> true | nil, err
//	tai.conversations.use(id [, dir]) -> true | nil, err
//	        marks it used now (in dir, default tai.cwd()): tai -c continues
//	        the conversation last used in a folder, resumed or updated
func (h *Host) openConversation(L *glua.LState, tai *glua.LTable) {
	tai.RawSetString("chat_history", L.NewFunction(h.luaChatHistory))
	tai.RawSetString("chat_restore", L.NewFunction(h.luaChatRestore))
	tai.RawSetString("conversations", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"save":   h.conversationSave,
		"list":   h.conversationList,
		"get":    h.conversationGet,
		"delete": h.conversationDelete,
		"use":    h.conversationUse,
	}))
}

// messagesTable converts messages to Lua through their JSON form.
func messagesTable(L *glua.LState, msgs []llm.Message) (glua.LValue, error) {
	if msgs == nil {
		msgs = []llm.Message{}
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		return nil, err
	}
	return ToLua(L, json.RawMessage(b))
}

// tableMessages converts a Lua list of messages back.
func tableMessages(L *glua.LState, v glua.LValue) ([]llm.Message, error) {
	g, err := FromLua(L, v)
	if err != nil {
		return nil, err
	}
	if m, ok := g.(map[string]any); ok && len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	var msgs []llm.Message
	if err := json.Unmarshal(b, &msgs); err != nil {
		return nil, fmt.Errorf("messages must be a list of {role=, content=, …}: %v", err)
	}
	for i := range msgs {
		for j, tc := range msgs[i].ToolCalls {
			if s := strings.TrimSpace(string(tc.Arguments)); s == "[]" || s == "" || s == "null" {
				msgs[i].ToolCalls[j].Arguments = json.RawMessage(`{}`)
			}
		}
	}
	return msgs, nil
}

func (h *Host) luaChatHistory(L *glua.LState) int {
	o := readChatOpts(L, 1)
	var msgs []llm.Message
	if a, ok := h.chat.agents[o.key]; ok {
		msgs = a.History()
	}
	t, err := messagesTable(L, msgs)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(t)
	return 1
}

func (h *Host) luaChatRestore(L *glua.LState) int {
	msgs, err := tableMessages(L, L.CheckTable(1))
	if err != nil {
		L.ArgError(1, err.Error())
	}
	o := readChatOpts(L, 2)
	a, err := h.chatAgent(o.key, o.tools)
	if err != nil {
		return fail(L, err.Error())
	}
	if h.chat.busy[a] {
		return fail(L, "a turn is running on this conversation; restore it after the turn")
	}
	if err := a.SetHistory(msgs); err != nil {
		return fail(L, "the conversation cannot be restored: "+err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func (h *Host) conversationSave(L *glua.LState) int {
	t := L.CheckTable(1)
	str := func(k string) string {
		s, _ := t.RawGetString(k).(glua.LString)
		return string(s)
	}
	c := vault.Conversation{ID: str("id"), Dir: str("dir"), Title: str("title"), Profile: str("profile")}
	if n, ok := t.RawGetString("turns").(glua.LNumber); ok {
		c.Turns = int(n)
	}
	if mv := t.RawGetString("messages"); mv != glua.LNil {
		msgs, err := tableMessages(L, mv)
		if err != nil {
			L.ArgError(1, "messages: "+err.Error())
		}
		b, err := json.Marshal(msgs)
		if err != nil {
			return fail(L, err.Error())
		}
		c.Messages = b
		if _, ok := t.RawGetString("turns").(glua.LNumber); !ok {
			for _, m := range msgs {
				if m.Role == "user" {
					c.Turns++
				}
			}
		}
	}
	s, err := h.Vault()
	if err != nil {
		return fail(L, err.Error())
	}
	id, err := s.ConversationPut(c)
	if tooBig := (*vault.ConversationTooBigError)(nil); errors.As(err, &tooBig) {
		return fail(L, err.Error()+": compact it (/compact) or start a new one (/new)")
	}
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(glua.LString(id))
	return 1
}

func conversationTable(L *glua.LState, c vault.Conversation) (*glua.LTable, error) {
	t := L.NewTable()
	t.RawSetString("id", glua.LString(c.ID))
	t.RawSetString("created", glua.LNumber(c.Created.Unix()))
	t.RawSetString("updated", glua.LNumber(c.Updated.Unix()))
	t.RawSetString("dir", glua.LString(c.Dir))
	t.RawSetString("title", glua.LString(c.Title))
	t.RawSetString("turns", glua.LNumber(c.Turns))
	t.RawSetString("profile", glua.LString(c.Profile))
	if len(c.Messages) > 0 {
		var msgs []llm.Message
		if err := json.Unmarshal(c.Messages, &msgs); err != nil {
			return nil, fmt.Errorf("conversation %s: its messages do not read back: %v", c.ID, err)
		}
		mt, err := messagesTable(L, msgs)
		if err != nil {
			return nil, err
		}
		t.RawSetString("messages", mt)
	}
	return t, nil
}

func (h *Host) conversationList(L *glua.LState) int {
	n := L.OptInt(1, 20)
	dir := L.OptString(2, "")
	s, err := h.Vault()
	if err != nil {
		return fail(L, err.Error())
	}
	list, err := s.ConversationList(n, dir)
	if err != nil {
		return fail(L, err.Error())
	}
	out := NewArray(L)
	for _, c := range list {
		t, err := conversationTable(L, c)
		if err != nil {
			return fail(L, err.Error())
		}
		out.Append(t)
	}
	L.Push(out)
	return 1
}

func (h *Host) conversationGet(L *glua.LState) int {
	id := L.CheckString(1)
	s, err := h.Vault()
	if err != nil {
		return fail(L, err.Error())
	}
	c, err := s.ConversationGet(id)
	if bad := (*vault.ConversationIDError)(nil); errors.As(err, &bad) {
		return fail(L, fmt.Sprintf("%q is not a conversation id (c and a number, as /resume lists them)", bad.ID))
	}
	if err != nil {
		return fail(L, strings.TrimPrefix(err.Error(), "vault: not found: "))
	}
	t, err := conversationTable(L, c)
	if err != nil {
		return fail(L, err.Error())
	}
	L.Push(t)
	return 1
}

func (h *Host) conversationDelete(L *glua.LState) int {
	id := L.CheckString(1)
	s, err := h.Vault()
	if err != nil {
		return fail(L, err.Error())
	}
	if err := s.ConversationDelete(id); err != nil {
		if errors.Is(err, vault.ErrNotFound) {
			return fail(L, strings.TrimPrefix(err.Error(), "vault: not found: "))
		}
		return fail(L, err.Error())
	}
	L.Push(glua.LTrue)
	return 1
}

func (h *Host) conversationUse(L *glua.LState) int {
	id := L.CheckString(1)
	dir, err := h.projectDir(L.OptString(2, ""))
	if err != nil {
		return fail(L, err.Error())
	}
	s, err := h.Vault()
	if err != nil {
		return fail(L, err.Error())
	}
	if err := s.ConversationUse(id, dir); err != nil {
		return fail(L, strings.TrimPrefix(err.Error(), "vault: not found: "))
	}
	L.Push(glua.LTrue)
	return 1
}
