package vault

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactionReady(t *testing.T) {
	withSecrets := newStore(t, nil)
	for _, n := range []string{"a", "b"} {
		if err := withSecrets.SecretSet(n, "sealed-value-"+n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := withSecrets.RedactionReady(); err != nil {
		t.Fatalf("unsealed vault: %v", err)
	}
	if err := withSecrets.Seal("c0rrect-h0rse"); err != nil {
		t.Fatal(err)
	}
	empty := newStore(t, nil)
	if err := empty.Seal("c0rrect-h0rse"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		path    string
		pass    string
		wantErr error
		want    []string
	}{
		{name: "sealing store holds the key", path: withSecrets.Path()},
		{name: "passphrase at hand", path: withSecrets.Path(), pass: "c0rrect-h0rse"},
		{name: "sealed but no sealed secret", path: empty.Path()},
		{name: "no passphrase", path: withSecrets.Path(), wantErr: ErrNoPassphrase,
			want: []string{"2 sealed secrets", "TAI_VAULT_PASSPHRASE", "terminal"}},
		{name: "wrong passphrase", path: withSecrets.Path(), pass: "wrong", wantErr: ErrWrongPassphrase,
			want: []string{"2 sealed secrets", "TAI_VAULT_PASSPHRASE"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := withSecrets
			if tt.name != "sealing store holds the key" {
				var err error
				if s, err = Open(tt.path, testOptions(tt.pass, nil)); err != nil {
					t.Fatal(err)
				}
			}
			err := s.RedactionReady()
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("RedactionReady = %v, want nil", err)
				}
				if tt.pass != "" && s.Redact("x sealed-value-a") != "x [REDACTED:a]" {
					t.Errorf("ready, but Redact does not know the sealed value")
				}
				return
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("RedactionReady = %v, want %v", err, tt.wantErr)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "sealed-value") || strings.Contains(err.Error(), "c0rrect-h0rse") {
				t.Errorf("error shows a secret: %v", err)
			}
		})
	}
}

func TestRedactionReadyKeepsTheSourcesReason(t *testing.T) {
	s := newStore(t, nil)
	if err := s.SecretSet("only", "sealed-value-only", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("c0rrect-h0rse"); err != nil {
		t.Fatal(err)
	}
	o := testOptions("", nil)
	o.Passphrase = func() (string, error) { return "", errors.New("TAI_VAULT_PASSPHRASE is not set") }
	s2, err := Open(s.Path(), o)
	if err != nil {
		t.Fatal(err)
	}
	err = s2.RedactionReady()
	if !errors.Is(err, ErrNoPassphrase) || !strings.Contains(err.Error(), "1 sealed secret ") ||
		!strings.Contains(err.Error(), "is not set") || !strings.Contains(err.Error(), "run tai on a terminal") {
		t.Fatalf("RedactionReady = %v", err)
	}
}
