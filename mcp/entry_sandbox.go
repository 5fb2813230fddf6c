package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"tai/mcp/screen"
)

// Sandbox is what an entry says about the sandbox its stdio server runs
// in, the entry's "sandbox" field. A nil *Sandbox, like the zero value,
// is the default: the server runs sandboxed where the system can, and as
// today where it cannot. The field is written
//
//	"sandbox": false                      the sandbox is off
//	"sandbox": "required"                 refuse to start where it cannot run
//	"sandbox": {"read": […], "write": […], "network": false, "required": true}
//
// Read and Write grant folders (absolute, or under ~) beyond the default
// policy; network false closes TCP where the kernel can.
type Sandbox struct {
	// Off turns the sandbox off for the server (sandbox = false).
	Off bool
	// Required refuses to start the server where no sandbox can run.
	Required bool
	// Read are folders the server may read.
	Read []string
	// Write are folders the server may read and write.
	Write []string
	// NoNetwork closes TCP (network = false).
	NoNetwork bool
}

// SandboxKeys are the fields of an entry's sandbox table.
var SandboxKeys = []string{"read", "write", "network", "required"}

// SandboxRequired is the text form of a Sandbox that is required and
// grants nothing: "sandbox": "required".
const SandboxRequired = "required"

// MaxSandboxGrants bounds the folders one entry grants: a server needs a
// few, and the consent screen shows every one.
const MaxSandboxGrants = 64

// Empty reports whether s says nothing beyond the default.
func (s *Sandbox) Empty() bool {
	return s == nil || !s.Off && !s.Required && len(s.Read) == 0 && len(s.Write) == 0 && !s.NoNetwork
}

// IsOff reports whether s turns the sandbox off.
func (s *Sandbox) IsOff() bool { return s != nil && s.Off }

// IsRequired reports whether s refuses to start without a sandbox.
func (s *Sandbox) IsRequired() bool { return s != nil && s.Required }

// sandboxObject is the table form of a Sandbox.
type sandboxObject struct {
	Read     []string `json:"read,omitempty"`
	Write    []string `json:"write,omitempty"`
	Network  *bool    `json:"network,omitempty"`
	Required bool     `json:"required,omitempty"`
}

// MarshalJSON writes s in the entry's form: false when off, "required"
// when that is all it says, else the table.
func (s Sandbox) MarshalJSON() ([]byte, error) {
	switch {
	case s.Off:
		return []byte("false"), nil
	case s.Required && len(s.Read) == 0 && len(s.Write) == 0 && !s.NoNetwork:
		return json.Marshal(SandboxRequired)
	}
	o := sandboxObject{Read: s.Read, Write: s.Write, Required: s.Required}
	if s.NoNetwork {
		no := false
		o.Network = &no
	}
	return json.Marshal(o)
}

// UnmarshalJSON reads the entry's forms: false, true (the default),
// "required", or the table, whose fields it knows all of.
func (s *Sandbox) UnmarshalJSON(b []byte) error {
	*s = Sandbox{}
	t := bytes.TrimSpace(b)
	switch {
	case bytes.Equal(t, []byte("false")):
		s.Off = true
		return nil
	case bytes.Equal(t, []byte("true")), bytes.Equal(t, []byte("null")), bytes.Equal(t, []byte("[]")):
		return nil
	case len(t) > 0 && t[0] == '"':
		var word string
		if err := json.Unmarshal(t, &word); err != nil {
			return err
		}
		if word != SandboxRequired {
			return fmt.Errorf("sandbox is the text %s: %s", Clip(word), SandboxForms)
		}
		s.Required = true
		return nil
	case len(t) == 0 || t[0] != '{':
		return errors.New("sandbox is not false, \"required\" or a table: " + SandboxForms)
	}
	var o sandboxObject
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return fmt.Errorf("sandbox: %v (its fields are %s)", err, strings.Join(SandboxKeys, ", "))
	}
	s.Read, s.Write, s.Required = o.Read, o.Write, o.Required
	s.NoNetwork = o.Network != nil && !*o.Network
	return nil
}

// SandboxForms says how the sandbox field is written, for messages.
const SandboxForms = `write sandbox = false to turn it off, "required" to refuse to start the server where no sandbox can run, or a table {read = {…}, write = {…}, network = false}`

// Validate checks s alone: off says nothing else, and each granted folder
// is an absolute path or one under ~, shown as written (no line break,
// escape or invisible character), within MaxSandboxGrants. Whether a grant
// reaches a folder tai never grants is config.CheckGrants'.
func (s *Sandbox) Validate() error {
	if s == nil {
		return nil
	}
	if s.Off && (s.Required || len(s.Read) > 0 || len(s.Write) > 0 || s.NoNetwork) {
		return errors.New("sandbox = false turns the sandbox off, so it cannot also be required, grant folders or close the network: keep one")
	}
	if n := len(s.Read) + len(s.Write); n > MaxSandboxGrants {
		return fmt.Errorf("sandbox grants %d folders, more than the %d a consent screen shows; grant the folders that hold them instead", n, MaxSandboxGrants)
	}
	for _, g := range s.Grants() {
		if err := ValidGrant(g.Path); err != nil {
			return fmt.Errorf("sandbox.%s[%d] %w", g.Mode, g.Index, err)
		}
	}
	return nil
}

// Grant is one folder a Sandbox grants: Mode "read" or "write", Index its
// place in that list (from 1).
type Grant struct {
	Mode  string
	Index int
	Path  string
}

// Grants lists what s grants, reads first.
func (s *Sandbox) Grants() []Grant {
	if s == nil {
		return nil
	}
	out := make([]Grant, 0, len(s.Read)+len(s.Write))
	for i, p := range s.Read {
		out = append(out, Grant{Mode: "read", Index: i + 1, Path: p})
	}
	for i, p := range s.Write {
		out = append(out, Grant{Mode: "write", Index: i + 1, Path: p})
	}
	return out
}

// MaxGrantPath is the longest path a grant may be (PATH_MAX).
const MaxGrantPath = 4096

// ValidGrant checks one granted folder as written: an absolute path, or ~
// or ~/… for the home folder, every character showing as itself. The
// error starts with the path (shown visibly) and says what to write.
func ValidGrant(p string) error {
	shown := QuotePath(p)
	switch {
	case p == "":
		return errors.New("is empty: write the folder's absolute path")
	case len(p) > MaxGrantPath:
		return fmt.Errorf("is %d bytes long, more than a path can be (%d)", len(p), MaxGrantPath)
	case screen.VisibleLine(p) != p:
		return fmt.Errorf("%s holds a line break, escape or invisible character: no folder a server needs is named so; write the path plainly", shown)
	case strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/"):
		return fmt.Errorf("%s names another user's home folder: write the absolute path", shown)
	case !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~"):
		return fmt.Errorf("%s is not an absolute path: write it from / (or from ~/ for the home folder)", shown)
	}
	return nil
}

// String describes s for people as the entry sets it ("" for the
// default): "off", or what it grants and closes and whether it is
// required, granted folders shown visibly.
func (s *Sandbox) String() string {
	if s.Empty() {
		return ""
	}
	if s.Off {
		return "off"
	}
	var parts []string
	if len(s.Read) > 0 {
		parts = append(parts, "reads "+visibleList(s.Read))
	}
	if len(s.Write) > 0 {
		parts = append(parts, "writes "+visibleList(s.Write))
	}
	if s.NoNetwork {
		parts = append(parts, "network closed")
	}
	if s.Required {
		parts = append(parts, "required")
	}
	return strings.Join(parts, "; ")
}

// QuotePath returns the path p in double quotes, whole, as VisibleLine
// shows it: a folder a person must read exactly.
func QuotePath(p string) string { return `"` + screen.VisibleLine(p) + `"` }

func visibleList(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = screen.VisibleLine(p)
	}
	return strings.Join(out, ", ")
}
