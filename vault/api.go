package vault

import (
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrNotFound reports a missing secret, record, profile, server or row.
	ErrNotFound = errors.New("vault: not found")
	// ErrWrongPassphrase reports a passphrase that does not open the seal.
	ErrWrongPassphrase = errors.New("vault: wrong passphrase")
	// ErrLocked reports that another process held the vault file's lock for
	// longer than Options.LockTimeout. The wrapping error names the file
	// (and the holder's pid when it can be found).
	ErrLocked = errors.New("vault: locked by another process")
	// ErrNoPassphrase reports a sealed value that must be read or written
	// while no passphrase is available (no passphrase source, the source
	// failed, the person gave none, or prompts are refused: see
	// Store.RefusePrompts).
	ErrNoPassphrase = errors.New("vault: the vault is sealed and no passphrase is available")
	// ErrSealedElsewhere is what PassphrasePrompt's last wraps on the first
	// try when the vault was sealed, or its passphrase changed, by another
	// process after this Store saw it: the person is asked for a
	// passphrase they did not expect to need.
	ErrSealedElsewhere = errors.New("vault: the vault was sealed by another process")
	// ErrUncleanShutdown is what AuditVerify's error wraps when the chain
	// holds but records a tail of the audit journal lost to a power loss
	// (or a crash of the machine): entries were lost, none were altered.
	ErrUncleanShutdown = errors.New("vault: unclean shutdown")
	// ErrExists reports a registration under a name already taken.
	ErrExists = errors.New("vault: already exists")
	// ErrTooMany reports a registration over a cap (Registration.MaxServers).
	ErrTooMany = errors.New("vault: too many")
)

// PassphraseTries is how many times one access asks Options.PassphrasePrompt
// before it gives up with ErrWrongPassphrase.
const PassphraseTries = 3

// Options tunes Open. A nil *Options means defaults.
type Options struct {
	// Passphrase supplies the seal passphrase from a source that gives the
	// same answer every time (TAI_VAULT_PASSPHRASE, say). It is called
	// lazily, at most once per Store, the first time a sealed value must be
	// read or written (so opening a sealed vault to read a profile never
	// prompts); a failure, empty answer or wrong passphrase is remembered,
	// so it does not cost a key derivation per call. Nil (with
	// PassphrasePrompt nil) means the vault cannot be unsealed: sealed reads
	// fail with a clear error.
	Passphrase func() (string, error)
	// PassphrasePrompt asks a person for the seal passphrase (a terminal
	// prompt). Unlike Passphrase, nothing it answers is remembered when it
	// fails: each access that needs the seal key and does not hold it asks
	// again, up to PassphraseTries times per access. try counts from 1;
	// on the first try last is nil, or wraps ErrSealedElsewhere when
	// another process sealed the vault (or changed its passphrase) after
	// this Store saw it; on later tries it says why the previous answer
	// was refused (it wraps ErrWrongPassphrase or ErrNoPassphrase for an
	// empty answer, and never holds the answer), fit to show before
	// asking again. An error from PassphrasePrompt (the person cancelled,
	// no terminal) ends the access with an error wrapping ErrNoPassphrase,
	// and is not remembered either. Set at most one of Passphrase and
	// PassphrasePrompt: Open refuses both.
	PassphrasePrompt func(try int, last error) (string, error)
	// RecordLimit caps the total bytes of record text the vault keeps:
	// RecordPut drops the oldest records first to make room for a new one,
	// and refuses a text larger than the limit on its own. Zero means
	// DefaultRecordLimit; negative means no limit.
	RecordLimit int64
	// RecordMaxAge makes RecordPut (and RecordPrune) drop records older
	// than this. Zero keeps records whatever their age.
	RecordMaxAge time.Duration
	// LockTimeout bounds the wait for the file lock per transaction.
	// Zero means 5 seconds.
	LockTimeout time.Duration

	// OnOpen, when set, is called every time the Store opens the bbolt
	// file (once per transaction): tests count opens with it to check that
	// a call path opens nothing it does not need.
	OnOpen func()

	// kdf overrides the key derivation cost of Seal (tests only).
	kdf kdfParams
}

// SecretInfo describes a secret without its value.
type SecretInfo struct {
	Name    string         `json:"name"`
	Meta    map[string]any `json:"meta,omitempty"`
	Updated time.Time      `json:"updated"`
}

// Record describes a stored text blob (a spilled tool result, say).
type Record struct {
	ID      string         `json:"id"`
	Size    int            `json:"size"` // bytes of the whole text
	Created time.Time      `json:"created"`
	Meta    map[string]any `json:"meta,omitempty"`
}

// AuditEntry is one line of the audit trail. Prev and Hash chain the
// entries: Hash covers every other field plus Prev (MAC aside), and Prev is
// the Hash of the entry before (empty for the first). MAC, set on entries
// appended while the vault is sealed, is an HMAC of Hash under the seal's
// audit key; it is empty on an unsealed vault.
type AuditEntry struct {
	Seq      uint64        `json:"seq"`
	Time     time.Time     `json:"time"`
	Kind     string        `json:"kind"`    // "mcp-call", "tool", "secret", …
	Subject  string        `json:"subject"` // "server/tool", a tool name, …
	Digest   string        `json:"digest"`  // digest of the arguments
	Outcome  string        `json:"outcome"` // "ok", "error", "denied", …
	Duration time.Duration `json:"duration"`
	Size     int           `json:"size"` // bytes of the result
	// Session names the session the call came from ("mcp:1a2b3c4d" for a
	// served MCP session); empty for the local one.
	Session string `json:"session,omitempty"`
	Prev    string `json:"prev"`
	Hash    string `json:"hash"`
	MAC     string `json:"mac,omitempty"`
}

// AuditBreak is the error AuditVerify returns at the first entry whose chain
// does not hold.
type AuditBreak struct {
	Seq    uint64
	Reason string
}

// Error says which entry breaks the chain and why.
func (e *AuditBreak) Error() string {
	return "vault: audit chain broken at entry " + uitoa(e.Seq) + ": " + e.Reason
}

// Server is one row of mcp_servers: a canonical MCP server entry.
type Server struct {
	Name      string            `json:"name"`
	Transport string            `json:"transport"` // "stdio" | "http"
	Command   string            `json:"command,omitempty"`
	Args      []string          `json:"args,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	URL       string            `json:"url,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"` // sealed at rest when the seal is on
	// OAuth holds the login settings of an http server: a client id, its
	// secret only as a ${NAME} reference, a callback port, a client ID
	// metadata document URL. None of it is a secret.
	OAuth  *ServerOAuth `json:"oauth,omitempty"`
	Cwd    string       `json:"cwd,omitempty"`
	Allow  []string     `json:"allow,omitempty"`
	Deny   []string     `json:"deny,omitempty"`
	Source string       `json:"source,omitempty"` // config-json, config-toml, github:o/r, explicit
	// Sandbox is what the entry says about the sandbox its stdio server
	// runs in; nil is the default.
	Sandbox *ServerSandbox `json:"sandbox,omitempty"`
	// Consented is the digest of the spawn a person last consented to (the
	// expanded argv, cwd, env names and URL), so a later spawn that differs
	// is shown again. It never holds the values themselves.
	Consented string    `json:"consented,omitempty"`
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
}

// ServerOAuth is the OAuth login settings of a Server.
type ServerOAuth struct {
	ClientID          string `json:"client_id,omitempty"`
	ClientSecret      string `json:"client_secret,omitempty"` // a ${NAME} reference, never a value
	CallbackPort      int    `json:"callback_port,omitempty"`
	ClientMetadataURL string `json:"client_metadata_url,omitempty"`
}

// ServerSandbox is the sandbox setting of a Server: off, required, the
// folders granted for reading and for writing, the network closed.
type ServerSandbox struct {
	Off       bool     `json:"off,omitempty"`
	Required  bool     `json:"required,omitempty"`
	Read      []string `json:"read,omitempty"`
	Write     []string `json:"write,omitempty"`
	NoNetwork bool     `json:"no_network,omitempty"`
}

// Kinds of pins and cached rows besides tools (Kind ""), kept in the
// same tables under keys no tool name can take.
const (
	// KindPrompt is a prompt a server lists.
	KindPrompt = "prompt"
	// KindInstructions is the instructions a server gives at initialize.
	KindInstructions = "instructions"
)

// ToolPin is one row of mcp_tool_pins: the hash of a tool definition a
// person granted, with that definition (its description and schema), so a
// later redefinition can be shown as a diff against it.
type ToolPin struct {
	Server string `json:"server"`
	// Kind is what is pinned: "" a tool, KindPrompt a prompt (Tool is its
	// name, Schema its arguments), KindInstructions the server's
	// instructions (Tool is "instructions", Description their text).
	Kind        string          `json:"kind,omitempty"`
	Tool        string          `json:"tool"`
	Hash        string          `json:"hash"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	Updated     time.Time       `json:"updated"`
}

// Registration is everything ServerRegister stores for one new server, in
// one transaction: its row, the registering profile's row, its pins and
// its tool cache.
type Registration struct {
	Server Server
	// Profile is the registering profile; Enabled is its row.
	Profile string
	Enabled bool
	Pins    []ToolPin
	Tools   []ServerTool
	// MaxServers refuses the registration (ErrTooMany) when that many
	// servers are stored already; zero means no cap.
	MaxServers int
}

// ServerState is one stored server with every row kept under its name.
type ServerState struct {
	Server   Server
	Profiles map[string]bool // profile -> enabled
	Pins     []ToolPin       // sorted by tool
	Tools    []ServerTool    // sorted by tool
	// OfferPins and Offers are the pins and cached rows of what else the
	// server offers (KindPrompt, KindInstructions), sorted by kind and
	// name.
	OfferPins []ToolPin
	Offers    []ServerTool
}

// ServerTool is one row of mcp_server_tools: a cached tool definition.
type ServerTool struct {
	Server string `json:"server"`
	// Kind is what is cached, as ToolPin.Kind says.
	Kind        string          `json:"kind,omitempty"`
	Tool        string          `json:"tool"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema,omitempty"`
	// Refused, when set, says why the listed definition is unusable (too
	// large, nested too deeply, listed twice differently); the row then
	// holds only the name.
	Refused string    `json:"refused,omitempty"`
	Updated time.Time `json:"updated"`
}

func uitoa(n uint64) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
