package lua

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	glua "github.com/yuin/gopher-lua"

	"tai/mcp/screen"
	"tai/vault"
	"tai/vault/secret"
)

// hostVault is the host's vault, opened by the first binding that needs it
// (see Vault).
type hostVault struct {
	once  sync.Once
	store *vault.Store
	err   error
}

// openVault installs tai.vault. Bad arguments raise; runtime failures
// return nil, message.
//
//	tai.vault.secret_set(name, value [, meta]) -> true [, warning] | nil, err
//	    (warning: the value is too short to be redacted)
//	tai.vault.secret_get(name) -> value, meta | nil, err
//	tai.vault.secret_list() -> {{name=, meta=, updated=}, …} | nil, err
//	tai.vault.secret_delete(name) -> true | nil, err
//	tai.vault.record_put(text [, meta]) -> id | nil, err
//	tai.vault.record_get(id [, offset, length]) -> text, {id=, size=, created=, meta=} | nil, err
//	tai.vault.record_list(n) -> {{id=, size=, created=, meta=}, …} (newest first) | nil, err
//	tai.vault.record_delete(id) -> true | nil, err
//	tai.vault.audit_tail(n [, kind]) -> {{seq=, time=, kind=, subject=, session=, …}, …} | nil, err
//	    the text fields on one line each, controls shown as \n, \x1b and the like
//	tai.vault.audit_verify() -> count [, note] | nil, err
//	    (note: the trail holds but records an unclean shutdown)
//	tai.vault.seal([{short=fn}]) -> true | nil, err   (with the current
//	    passphrase; one under MinPassphrase characters seals only when
//	    fn(n) returns true, n its length, when fn is given)
//	tai.vault.unseal() -> count | nil, err   (with the present passphrase;
//	    count: the audit entries verified under the seal key first)
//	tai.vault.sealed() -> bool | nil, err
//	tai.vault.path() -> path | nil, err
//	tai.vault.redact(text) -> text | nil, err
//	    every known secret value replaced by [REDACTED:name]; an error when
//	    sealed secrets cannot be read (no passphrase), as they would pass
//	tai.outcome.NAME -> word   the outcome words tai reports, declared
//	    once in Go (vault.Outcomes): OK, ERROR, DENIED, CANCELLED, UNKNOWN
//	    (a tool call), GRANTED, DELETED (audit entries), ADDED, SKIPPED,
//	    REFUSED (a server an add met)
//	tai.vault.credential_name(name) -> bool   whether a variable's or a
//	    config key's name says it holds a credential (GITHUB_TOKEN,
//	    clientSecret, GITHUB_PAT; not MEMORY_FILE_PATH): tai's one rule,
//	    by the words of tai.vault.credential_words
//	tai.vault.credential_words([words]) -> words
//	    the words that mark a name as a credential's: "*TOKEN*" a word of
//	    the name holding TOKEN, a bare "PAT" the whole word PAT (so PATH
//	    is none). With a list, it replaces the list (the shell's
//	    environment, redaction and the consent screen follow it); it
//	    returns the list in force
//	tai.vault.redactor() -> r | nil, err   redaction of streamed text:
//	    r:push(delta) -> text safe to show now (a tail that could begin a
//	    secret or an environment value is held back); r:flush() -> the rest
func (h *Host) openVault(L *glua.LState, tai *glua.LTable) {
	outcomes := L.NewTable()
	for name, word := range vault.Outcomes() {
		outcomes.RawSetString(name, glua.LString(word))
	}
	tai.RawSetString("outcome", outcomes)
	tai.RawSetString("vault", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"secret_set":       h.secretSet,
		"secret_get":       h.secretGet,
		"secret_list":      h.secretList,
		"secret_delete":    h.secretDelete,
		"record_put":       h.recordPut,
		"record_get":       h.recordGet,
		"record_list":      h.recordList,
		"record_delete":    h.recordDelete,
		"audit_tail":       h.auditTail,
		"audit_verify":     h.auditVerify,
		"seal":             h.seal,
		"unseal":           h.unseal,
		"sealed":           h.sealed,
		"path":             h.vaultPath,
		"redact":           h.redact,
		"redactor":         h.newRedactor,
		"credential_name":  h.credentialName,
		"credential_words": h.credentialWords,
	}))
	mt := L.NewTypeMetatable(redactorType)
	L.SetField(mt, "__index", L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"push":  redactorPush,
		"flush": redactorFlush,
	}))
}

// Vault returns the host's vault, opening it on first use.
func (h *Host) Vault() (*vault.Store, error) {
	h.vault.once.Do(func() {
		if h.opts.Vault == nil {
			h.vault.err = errors.New("no vault is open in this session")
			return
		}
		h.vault.store, h.vault.err = h.opts.Vault()
	})
	return h.vault.store, h.vault.err
}

// withVault runs fn with the vault, or returns nil, message when it cannot
// be opened.
func (h *Host) withVault(L *glua.LState, fn func(*vault.Store) int) int {
	s, err := h.Vault()
	if err != nil {
		return fail(L, err.Error())
	}
	return fn(s)
}

// optMeta reads an optional table argument as a JSON object.
func optMeta(L *glua.LState, n int) map[string]any {
	t := L.OptTable(n, nil)
	if t == nil {
		return nil
	}
	v, err := FromLua(L, t)
	if err != nil {
		L.ArgError(n, "meta: "+err.Error())
	}
	m, ok := v.(map[string]any)
	if !ok {
		L.ArgError(n, "meta must be a table with string keys, not a list")
	}
	return m
}

func (h *Host) secretSet(L *glua.LState) int {
	name := L.CheckString(1)
	value := L.CheckString(2)
	meta := optMeta(L, 3)
	if err := vault.ValidSecretName(name); err != nil {
		L.ArgError(1, err.Error())
	}
	return h.withVault(L, func(s *vault.Store) int {
		if err := s.SecretSet(name, value, meta); err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LTrue)
		if len(value) < secret.MinLen {
			L.Push(glua.LString(fmt.Sprintf("warning: secret %s is shorter than %d bytes, so it cannot be redacted and will show wherever it appears", name, secret.MinLen)))
			return 2
		}
		return 1
	})
}

func (h *Host) secretGet(L *glua.LState) int {
	name := L.CheckString(1)
	return h.withVault(L, func(s *vault.Store) int {
		value, meta, err := s.SecretGet(name)
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LString(value))
		L.Push(mustLua(L, metaOrEmpty(meta)))
		return 2
	})
}

func (h *Host) secretList(L *glua.LState) int {
	return h.withVault(L, func(s *vault.Store) int {
		list, err := s.SecretList()
		if err != nil {
			return fail(L, err.Error())
		}
		out := NewArray(L)
		for _, si := range list {
			t := L.NewTable()
			t.RawSetString("name", glua.LString(si.Name))
			t.RawSetString("meta", mustLua(L, metaOrEmpty(si.Meta)))
			t.RawSetString("updated", timeString(si.Updated))
			out.Append(t)
		}
		L.Push(out)
		return 1
	})
}

func (h *Host) secretDelete(L *glua.LState) int {
	name := L.CheckString(1)
	return h.withVault(L, func(s *vault.Store) int {
		if err := s.SecretDelete(name); err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LTrue)
		return 1
	})
}

func (h *Host) recordPut(L *glua.LState) int {
	text := L.CheckString(1)
	meta := optMeta(L, 2)
	return h.withVault(L, func(s *vault.Store) int {
		id, err := s.RecordPut(text, meta)
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LString(id))
		return 1
	})
}

func (h *Host) recordGet(L *glua.LState) int {
	id := L.CheckString(1)
	offset := L.OptInt(2, 0)
	length := L.OptInt(3, 0)
	if offset < 0 {
		L.ArgError(2, "offset must be 0 or more")
	}
	if length < 0 {
		L.ArgError(3, "length must be 0 (the rest) or more")
	}
	return h.withVault(L, func(s *vault.Store) int {
		text, rec, err := s.RecordGet(id, offset, length)
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LString(text))
		L.Push(recordTable(L, rec))
		return 2
	})
}

func (h *Host) recordDelete(L *glua.LState) int {
	id := L.CheckString(1)
	return h.withVault(L, func(s *vault.Store) int {
		if err := s.RecordDelete(id); err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LTrue)
		return 1
	})
}

func (h *Host) recordList(L *glua.LState) int {
	n := L.OptInt(1, 20)
	if n < 1 {
		L.ArgError(1, "n must be 1 or more")
	}
	return h.withVault(L, func(s *vault.Store) int {
		list, err := s.RecordList(n)
		if err != nil {
			return fail(L, err.Error())
		}
		out := NewArray(L)
		for _, r := range list {
			out.Append(recordTable(L, r))
		}
		L.Push(out)
		return 1
	})
}

func recordTable(L *glua.LState, r vault.Record) *glua.LTable {
	t := L.NewTable()
	t.RawSetString("id", glua.LString(r.ID))
	t.RawSetString("size", glua.LNumber(r.Size))
	t.RawSetString("created", timeString(r.Created))
	t.RawSetString("meta", mustLua(L, metaOrEmpty(r.Meta)))
	return t
}

func (h *Host) auditTail(L *glua.LState) int {
	n := L.OptInt(1, 20)
	kind := L.OptString(2, "")
	if n < 1 {
		L.ArgError(1, "n must be 1 or more")
	}
	return h.withVault(L, func(s *vault.Store) int {
		list, err := s.AuditTail(n, kind)
		if err != nil {
			return fail(L, err.Error())
		}
		out := NewArray(L)
		for _, e := range list {
			t := L.NewTable()
			t.RawSetString("seq", glua.LNumber(e.Seq))
			t.RawSetString("time", timeString(e.Time))
			t.RawSetString("kind", glua.LString(screen.VisibleLine(e.Kind)))
			t.RawSetString("subject", glua.LString(screen.VisibleLine(e.Subject)))
			t.RawSetString("digest", glua.LString(screen.VisibleLine(e.Digest)))
			t.RawSetString("outcome", glua.LString(screen.VisibleLine(e.Outcome)))
			t.RawSetString("duration_ms", glua.LNumber(e.Duration.Milliseconds()))
			t.RawSetString("size", glua.LNumber(e.Size))
			if e.Session != "" {
				t.RawSetString("session", glua.LString(screen.VisibleLine(e.Session)))
			}
			t.RawSetString("prev", glua.LString(e.Prev))
			t.RawSetString("hash", glua.LString(e.Hash))
			out.Append(t)
		}
		L.Push(out)
		return 1
	})
}

func (h *Host) auditVerify(L *glua.LState) int {
	return h.withVault(L, func(s *vault.Store) int {
		n, err := s.AuditVerify()
		if errors.Is(err, vault.ErrUncleanShutdown) {
			// Not tampering: entries were lost to a power loss. The count
			// comes with the note.
			L.Push(glua.LNumber(n))
			L.Push(glua.LString(err.Error()))
			return 2
		}
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LNumber(n))
		return 1
	})
}

// MinPassphrase is the length (in characters) under which tai.vault.seal
// asks its short function whether to seal anyway: the seal is only as
// strong as the passphrase.
const MinPassphrase = 8

func (h *Host) seal(L *glua.LState) int {
	return h.withVault(L, func(s *vault.Store) int {
		if h.opts.Passphrase == nil {
			return fail(L, "no passphrase source: set TAI_VAULT_PASSPHRASE and try again")
		}
		// Changing the passphrase needs the current one: it is asked for
		// (or found wrong) before the new one, not after.
		if on, err := s.Sealed(); err != nil {
			return fail(L, err.Error())
		} else if on {
			if err := s.RedactionReady(); err != nil {
				if inner := errors.Unwrap(err); inner != nil {
					err = inner
				}
				return fail(L, "changing the passphrase needs the current one: "+err.Error())
			}
		}
		pass, err := h.opts.Passphrase()
		if err != nil {
			return fail(L, err.Error())
		}
		if pass == "" {
			return fail(L, "the passphrase is empty: set TAI_VAULT_PASSPHRASE (or type one at the prompt) and try again")
		}
		if n := utf8.RuneCountInString(pass); n < MinPassphrase {
			if opts, ok := L.Get(1).(*glua.LTable); ok {
				if fn, ok := opts.RawGetString("short").(*glua.LFunction); ok {
					if err := L.CallByParam(glua.P{Fn: fn, NRet: 1, Protect: true}, glua.LNumber(n)); err != nil {
						return fail(L, "nothing was sealed: "+luaError(err).Error())
					}
					goOn := glua.LVAsBool(L.Get(-1))
					L.Pop(1)
					if !goOn {
						return fail(L, "nothing was sealed: the passphrase was too short to keep")
					}
				}
			}
		}
		if err := s.Seal(pass); err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LTrue)
		return 1
	})
}

func (h *Host) unseal(L *glua.LState) int {
	return h.withVault(L, func(s *vault.Store) int {
		// Said before the passphrase is asked for, not after.
		if on, err := s.Sealed(); err != nil {
			return fail(L, err.Error())
		} else if !on {
			return fail(L, "the vault is not sealed: nothing to unseal")
		}
		if h.opts.CurrentPassphrase == nil {
			return fail(L, "no passphrase source: set TAI_VAULT_PASSPHRASE and try again")
		}
		pass, err := h.opts.CurrentPassphrase()
		if err != nil {
			return fail(L, err.Error())
		}
		n, err := s.Unseal(pass)
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LNumber(n))
		return 1
	})
}

func (h *Host) sealed(L *glua.LState) int {
	return h.withVault(L, func(s *vault.Store) int {
		on, err := s.Sealed()
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LBool(on))
		return 1
	})
}

func (h *Host) vaultPath(L *glua.LState) int {
	return h.withVault(L, func(s *vault.Store) int {
		L.Push(glua.LString(s.Path()))
		return 1
	})
}

func metaOrEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// mustLua converts a value known to be JSON-shaped (it came out of the
// vault's JSON); a failure here is a bug, so it raises.
func mustLua(L *glua.LState, v any) glua.LValue {
	lv, err := ToLua(L, v)
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	return lv
}

func timeString(t time.Time) glua.LValue {
	if t.IsZero() {
		return glua.LNil
	}
	return glua.LString(t.UTC().Format(time.RFC3339))
}

// credentialName answers tai.vault.credential_name: tai's one rule for
// whether a variable's or key's name says it holds a credential.
func (h *Host) credentialName(L *glua.LState) int {
	L.Push(glua.LBool(h.credentials.name(L.CheckString(1))))
	return 1
}

func (h *Host) credentialWords(L *glua.LState) int {
	return settableLua(L, "tai.vault.credential_words", "words", &h.credentials.settableList, h.credentials.get, func(i int, s string) (string, error) {
		w, err := secret.ParseCredentialWord(s)
		if err != nil {
			return "", fmt.Errorf("tai.vault.credential_words[%d]: %v", i, err)
		}
		return w, nil
	})
}

func (h *Host) redact(L *glua.LState) int {
	text := L.CheckString(1)
	return h.withVault(L, func(s *vault.Store) int {
		red, err := s.Redactor()
		if err != nil {
			return fail(L, err.Error())
		}
		L.Push(glua.LString(red.Redact(text)))
		return 1
	})
}

const redactorType = "tai.redactor"

// StreamRedactor redacts text that arrives in pieces (a streamed answer),
// where a secret may be split across two pieces. Push returns what is safe
// to show at once and holds back the longest tail that could begin one of
// the values it knows (the vault's secrets as they are at each push, so a
// secret set during the stream is covered from then on, and the values
// given to NewStreamRedactor: the environment's, where API keys, the
// passphrase and ${VAR} values come from); Flush returns what is held
// back. It fails closed: when the vault's secrets cannot be read, Push and
// Flush return an error naming the cause and show nothing.
type StreamRedactor struct {
	redactor func() (*vault.Redactor, error)
	values   []string
	pending  string
}

// NewStreamRedactor returns a StreamRedactor over s's secrets and the
// values in extra.
func NewStreamRedactor(s *vault.Store, extra []string) (*StreamRedactor, error) {
	if _, err := s.Redactor(); err != nil {
		return nil, err
	}
	r := &StreamRedactor{redactor: s.Redactor}
	for _, v := range extra {
		if len(v) >= secret.MinLen {
			r.values = append(r.values, v)
		}
	}
	return r, nil
}

// held returns the length of the longest tail of p that is the start (not
// the whole) of a known value.
func (r *StreamRedactor) held(red *vault.Redactor, p string) int {
	if p == "" {
		return 0
	}
	best := red.Held(p)
	last := p[len(p)-1]
	for _, v := range r.values {
		for k := min(len(v)-1, len(p)); k > best; k-- {
			if v[k-1] == last && v[:k] == p[len(p)-k:] {
				best = k
				break
			}
		}
	}
	return best
}

// Push adds delta and returns the redacted text that is safe to show now.
func (r *StreamRedactor) Push(delta string) (string, error) {
	r.pending += delta
	red, err := r.redactor()
	if err != nil {
		return "", err
	}
	n := r.held(red, r.pending)
	if n == len(r.pending) {
		return "", nil
	}
	full := red.Redact(r.pending)
	tail := r.pending[len(r.pending)-n:]
	if !strings.HasSuffix(full, tail) {
		// A secret found whole reaches into the held tail: wait for more.
		return "", nil
	}
	r.pending = tail
	return full[:len(full)-n], nil
}

// Flush returns the redacted text held back and empties the redactor.
func (r *StreamRedactor) Flush() (string, error) {
	red, err := r.redactor()
	if err != nil {
		return "", err
	}
	out := red.Redact(r.pending)
	r.pending = ""
	return out, nil
}

func (h *Host) newRedactor(L *glua.LState) int {
	return h.withVault(L, func(s *vault.Store) int {
		var env []string
		for _, kv := range os.Environ() {
			if _, v, ok := strings.Cut(kv, "="); ok {
				env = append(env, v)
			}
		}
		r, err := NewStreamRedactor(s, env)
		if err != nil {
			return fail(L, err.Error())
		}
		ud := L.NewUserData()
		ud.Value = r
		L.SetMetatable(ud, L.GetTypeMetatable(redactorType))
		L.Push(ud)
		return 1
	})
}

func checkRedactor(L *glua.LState) *StreamRedactor {
	r, ok := L.CheckUserData(1).Value.(*StreamRedactor)
	if !ok {
		L.ArgError(1, "redactor expected (from tai.vault.redactor())")
	}
	return r
}

// redactorPush and redactorFlush raise the redactor's error: a stream
// whose secrets cannot be read must stop, not show its text.
func redactorPush(L *glua.LState) int {
	r := checkRedactor(L)
	out, err := r.Push(L.CheckString(2))
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	L.Push(glua.LString(out))
	return 1
}

func redactorFlush(L *glua.LState) int {
	out, err := checkRedactor(L).Flush()
	if err != nil {
		L.RaiseError("%s", err.Error())
	}
	L.Push(glua.LString(out))
	return 1
}
