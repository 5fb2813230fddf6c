package vault

import (
	"errors"
	"strings"
	"testing"
)

func TestValidSecretName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string
	}{
		{"github-token", ""},
		{"mcp-oauth-srv.v2_access", ""},
		{"A", ""},
		{strings.Repeat("x", 128), ""},
		{"", "empty secret name"},
		{strings.Repeat("x", 129), "at most 128"},
		{"has space", `' '`},
		{"slash/name", `'/'`},
		{"ünïcode", "use only letters"},
		{"nul\x00", "use only letters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidSecretName(tt.name)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ValidSecretName(%q) = %v, want nil", tt.name, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("ValidSecretName(%q) = %v, want an error containing %q", tt.name, err, tt.wantErr)
			}
		})
	}
}

func TestSecrets(t *testing.T) {
	s := newStore(t, nil)
	if err := s.SecretSet("b-token", "value-b", map[string]any{"client_id": "abc"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SecretSet("a-token", "value-a", nil); err != nil {
		t.Fatal(err)
	}
	v, meta, err := s.SecretGet("b-token")
	if err != nil || v != "value-b" || meta["client_id"] != "abc" {
		t.Fatalf("SecretGet = %q, %v, %v", v, meta, err)
	}

	// A nil meta keeps the existing meta; a non-nil one replaces it.
	if err := s.SecretSet("b-token", "value-b2", nil); err != nil {
		t.Fatal(err)
	}
	if v, meta, _ := s.SecretGet("b-token"); v != "value-b2" || meta["client_id"] != "abc" {
		t.Fatalf("after nil-meta update: %q, %v", v, meta)
	}
	if err := s.SecretSet("b-token", "value-b3", map[string]any{"x": 1.0}); err != nil {
		t.Fatal(err)
	}
	if _, meta, _ := s.SecretGet("b-token"); meta["client_id"] != nil || meta["x"] != 1.0 {
		t.Fatalf("after meta replace: %v", meta)
	}

	list, err := s.SecretList()
	if err != nil || len(list) != 2 || list[0].Name != "a-token" || list[1].Name != "b-token" || list[1].Updated.IsZero() {
		t.Fatalf("SecretList = %+v, %v", list, err)
	}

	if err := s.SecretDelete("a-token"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SecretGet("a-token"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SecretGet after delete = %v, want ErrNotFound", err)
	}
	if err := s.SecretDelete("a-token"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second SecretDelete = %v, want ErrNotFound", err)
	}
}

func TestSecretBadInput(t *testing.T) {
	s := newStore(t, nil)
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"set bad name", func() error { return s.SecretSet("a b", "v", nil) }, "use only letters"},
		{"get bad name", func() error { _, _, err := s.SecretGet(""); return err }, "empty secret name"},
		{"delete bad name", func() error { return s.SecretDelete("x/y") }, "use only letters"},
		{"meta not JSON", func() error { return s.SecretSet("ok", "v", map[string]any{"f": func() {}}) }, "not JSON-encodable"},
		{"missing", func() error { _, _, err := s.SecretGet("nope"); return err }, `secret "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
