package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestSandboxJSONForms: each form of the entry's sandbox field reads into
// what it says and writes back in the same form, so an entry survives a
// trip through the vault and Lua unchanged.
func TestSandboxJSONForms(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Sandbox
		out  string // written back ("" means in)
	}{
		{name: "off", in: `false`, want: Sandbox{Off: true}},
		{name: "required", in: `"required"`, want: Sandbox{Required: true}},
		{name: "true is the default", in: `true`, want: Sandbox{}, out: `{}`},
		{name: "table", in: `{"read":["~/docs"],"write":["/tmp/out"],"network":false,"required":true}`,
			want: Sandbox{Read: []string{"~/docs"}, Write: []string{"/tmp/out"}, NoNetwork: true, Required: true}},
		{name: "network open is the default", in: `{"read":["/srv"],"network":true}`, want: Sandbox{Read: []string{"/srv"}}, out: `{"read":["/srv"]}`},
		{name: "required alone in a table", in: `{"required":true}`, want: Sandbox{Required: true}, out: `"required"`},
		{name: "empty Lua table", in: `[]`, want: Sandbox{}, out: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sandbox
			if err := json.Unmarshal([]byte(tt.in), &s); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s, tt.want) {
				t.Fatalf("read %s as %+v, want %+v", tt.in, s, tt.want)
			}
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.out
			if want == "" {
				want = tt.in
			}
			if string(b) != want {
				t.Fatalf("wrote %s, want %s", b, want)
			}
		})
	}
}

// TestSandboxJSONRefusals: a form the field does not have is an error
// that says which forms it has.
func TestSandboxJSONRefusals(t *testing.T) {
	for _, in := range []string{`"off"`, `1`, `{"reed":["/x"]}`, `{"read":"/x"}`, `{"network":"no"}`} {
		var s Sandbox
		err := json.Unmarshal([]byte(in), &s)
		if err == nil {
			t.Errorf("%s was read as %+v", in, s)
			continue
		}
		if !strings.Contains(err.Error(), "sandbox") {
			t.Errorf("%s: error %q does not name the field", in, err)
		}
	}
}

// TestSandboxValidate: granted folders are absolute or under ~, shown as
// written, and few enough to read; off says nothing else.
func TestSandboxValidate(t *testing.T) {
	many := make([]string, MaxSandboxGrants+1)
	for i := range many {
		many[i] = "/srv/x"
	}
	tests := []struct {
		name string
		s    Sandbox
		want string // in the error; "" for none
	}{
		{name: "absolute and home", s: Sandbox{Read: []string{"/srv", "~", "~/docs"}, Write: []string{"/tmp/x"}}},
		{name: "relative", s: Sandbox{Read: []string{"docs"}}, want: `sandbox.read[1] "docs" is not an absolute path`},
		{name: "another user's home", s: Sandbox{Write: []string{"/tmp", "~root/x"}}, want: `sandbox.write[2] "~root/x" names another user's home folder`},
		{name: "line break", s: Sandbox{Read: []string{"/tmp/a\nb"}}, want: `"/tmp/a\nb" holds a line break, escape or invisible character`},
		{name: "escape", s: Sandbox{Read: []string{"/tmp/\x1b[2J"}}, want: `"/tmp/\x1b[2J" holds`},
		{name: "zero width", s: Sandbox{Read: []string{"/tmp/a\u200bb"}}, want: `"/tmp/a\u200bb" holds`},
		{name: "empty", s: Sandbox{Read: []string{""}}, want: "sandbox.read[1] is empty"},
		{name: "too long", s: Sandbox{Read: []string{"/" + strings.Repeat("a", MaxGrantPath)}}, want: "bytes long"},
		{name: "too many", s: Sandbox{Read: many}, want: "grants 65 folders, more than the 64"},
		{name: "off and more", s: Sandbox{Off: true, Read: []string{"/srv"}}, want: "sandbox = false turns the sandbox off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && err == nil:
				t.Fatalf("taken, want an error with %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("error %q, want %q in it", err, tt.want)
			}
		})
	}
}

// TestEntrySandboxShown: the folders a sandbox grants count toward what a
// consent screen shows, and an http entry takes no sandbox.
func TestEntrySandboxShown(t *testing.T) {
	long := strings.Repeat("a", MaxGrantPath-10)
	var grants []string
	for i := 0; i < 5; i++ {
		grants = append(grants, "/"+long+string(rune('a'+i)))
	}
	e := Entry{Name: "x", Transport: TransportStdio, Command: "srv", Sandbox: &Sandbox{Read: grants}}
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "a consent screen shows") {
		t.Fatalf("5 grants of 4 KiB: %v", err)
	}
	h := Entry{Name: "x", Transport: TransportHTTP, URL: "https://a.test/mcp", Sandbox: &Sandbox{Off: true}}
	if err := h.Validate(); err == nil || !strings.Contains(err.Error(), "sandbox is for stdio servers") {
		t.Fatalf("http with sandbox: %v", err)
	}
}

// TestSandboxString: what a person reads of the entry's setting.
func TestSandboxString(t *testing.T) {
	for _, tt := range []struct {
		s    *Sandbox
		want string
	}{
		{nil, ""},
		{&Sandbox{}, ""},
		{&Sandbox{Off: true}, "off"},
		{&Sandbox{Read: []string{"~/a\u200b"}, Write: []string{"/b"}, NoNetwork: true, Required: true}, `reads ~/a\u200b; writes /b; network closed; required`},
	} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.s, got, tt.want)
		}
	}
}
