package vault

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// promptScript answers PassphrasePrompt from a list and records each call's
// try number and last error.
type promptScript struct {
	answers []string // "!" answers with an error (a cancelled prompt)
	tries   []int
	lasts   []error
}

func (p *promptScript) prompt(try int, last error) (string, error) {
	p.tries = append(p.tries, try)
	p.lasts = append(p.lasts, last)
	if len(p.answers) == 0 {
		return "", errors.New("the script ran out of answers")
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	if a == "!" {
		return "", errors.New("cancelled")
	}
	return a, nil
}

func TestPassphrasePrompt(t *testing.T) {
	path := sealedFixture(t)
	tests := []struct {
		name    string
		answers []string
		// per access: the error wanted ("" for success) and the tries asked
		accesses []string
		tries    []int
	}{
		{
			name:     "right at once",
			answers:  []string{"right"},
			accesses: []string{"ok", "ok"},
			tries:    []int{1},
		},
		{
			name:     "wrong then right in one access",
			answers:  []string{"wrong", "right"},
			accesses: []string{"ok", "ok"},
			tries:    []int{1, 2},
		},
		{
			name:     "empty then right in one access",
			answers:  []string{"", "right"},
			accesses: []string{"ok"},
			tries:    []int{1, 2},
		},
		{
			name:     "three wrong then the next access asks again",
			answers:  []string{"wrong", "wrong", "wrong", "right"},
			accesses: []string{"wrong", "ok"},
			tries:    []int{1, 2, 3, 1},
		},
		{
			name:     "three empty then the next access asks again",
			answers:  []string{"", "", "", "right"},
			accesses: []string{"none", "ok"},
			tries:    []int{1, 2, 3, 1},
		},
		{
			name:     "cancel ends the access and is not remembered",
			answers:  []string{"!", "wrong", "right"},
			accesses: []string{"none", "ok"},
			tries:    []int{1, 1, 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &promptScript{answers: tt.answers}
			s, err := Open(path, &Options{kdf: testKDF, PassphrasePrompt: p.prompt})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tt.accesses {
				v, _, err := s.SecretGet("s1")
				switch want {
				case "ok":
					if err != nil || v != "fixture-secret-1" {
						t.Fatalf("access %d = %q, %v; want the secret", i, v, err)
					}
				case "wrong":
					if !errors.Is(err, ErrWrongPassphrase) || !strings.Contains(err.Error(), "asks again") {
						t.Fatalf("access %d = %v; want ErrWrongPassphrase saying it asks again", i, err)
					}
				case "none":
					if !errors.Is(err, ErrNoPassphrase) {
						t.Fatalf("access %d = %v; want ErrNoPassphrase", i, err)
					}
				}
				if err != nil && strings.Contains(err.Error(), "wrong\"") {
					t.Fatalf("the error shows the answer: %v", err)
				}
			}
			if !slices.Equal(p.tries, tt.tries) {
				t.Fatalf("tries asked = %v, want %v", p.tries, tt.tries)
			}
			for i, try := range p.tries {
				last := p.lasts[i]
				if (try == 1) != (last == nil) {
					t.Fatalf("try %d was told last = %v", try, last)
				}
				if last != nil && !errors.Is(last, ErrWrongPassphrase) && !errors.Is(last, ErrNoPassphrase) {
					t.Fatalf("last = %v, want ErrWrongPassphrase or ErrNoPassphrase", last)
				}
			}
		})
	}
}

func TestPassphrasePromptLastSaysWhy(t *testing.T) {
	path := sealedFixture(t)
	p := &promptScript{answers: []string{"wrong", "", "right"}}
	s, err := Open(path, &Options{kdf: testKDF, PassphrasePrompt: p.prompt})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RedactionReady(); err != nil {
		t.Fatal(err)
	}
	if len(p.lasts) != 3 || !errors.Is(p.lasts[1], ErrWrongPassphrase) || !errors.Is(p.lasts[2], ErrNoPassphrase) {
		t.Fatalf("lasts = %v", p.lasts)
	}
	if strings.Contains(p.lasts[1].Error(), "wrong\"") {
		t.Fatalf("last shows the answer: %v", p.lasts[1])
	}
}

func TestPassphrasePromptRedactionReady(t *testing.T) {
	path := sealedFixture(t)
	p := &promptScript{answers: []string{"a", "b", "c", "right"}}
	s, err := Open(path, &Options{kdf: testKDF, PassphrasePrompt: p.prompt})
	if err != nil {
		t.Fatal(err)
	}
	err = s.RedactionReady()
	if !errors.Is(err, ErrWrongPassphrase) || !strings.Contains(err.Error(), "when asked again") {
		t.Fatalf("RedactionReady after three wrong answers = %v", err)
	}
	if err := s.RedactionReady(); err != nil {
		t.Fatalf("RedactionReady after the right answer = %v", err)
	}
	if got := s.Redact("x fixture-secret-3 y"); got != "x [REDACTED:s3] y" {
		t.Fatalf("Redact = %q", got)
	}
}

// TestPassphraseSourceRemembersFailure: a non-interactive source is asked
// once; its wrong answer is remembered for the Store's life.
func TestPassphraseSourceRemembersFailure(t *testing.T) {
	path := sealedFixture(t)
	calls := 0
	s, err := Open(path, testOptions("wrong", &calls))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, _, err := s.SecretGet("s1"); !errors.Is(err, ErrWrongPassphrase) {
			t.Fatalf("SecretGet = %v, want ErrWrongPassphrase", err)
		}
	}
	if calls != 1 {
		t.Fatalf("the source was asked %d times, want once", calls)
	}
}

func TestPassphraseBothSourcesRefused(t *testing.T) {
	_, err := Open(t.TempDir()+"/v.db", &Options{
		Passphrase:       func() (string, error) { return "x", nil },
		PassphrasePrompt: func(int, error) (string, error) { return "x", nil },
	})
	if err == nil || !strings.Contains(err.Error(), "both set") {
		t.Fatalf("Open with both sources = %v", err)
	}
}
