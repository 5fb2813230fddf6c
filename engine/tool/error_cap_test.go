package tool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"tai/vault/vaulttest"
)

// A tool (a bridged server's JSON-RPC error, a Lua error) that fails with
// a huge message must not put all of it into the model's context: the
// text is cut at MaxErrorText, saying so, and a secret mark is never cut
// in two.
func TestHugeToolErrorIsCut(t *testing.T) {
	store := vaulttest.Open(t)
	if err := store.SecretSet("tok", "s3cr3t-token-value", nil); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(store, NewApprover(Yolo, nil))
	for _, tc := range []struct {
		name, msg string
		cut       bool
	}{
		{"small", "boom", false},
		{"huge", "boom " + strings.Repeat("E", 10<<20), true},
		{"huge with secret at the cut", strings.Repeat("x", MaxErrorText-30) + "s3cr3t-token-value" + strings.Repeat("y", 1<<20), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "fail_" + strings.ReplaceAll(tc.name, " ", "_")
			if err := reg.Add(Tool{Name: name, Description: "fails", Safe: true, Run: func(context.Context, map[string]any) (Result, error) {
				return Result{}, errors.New(tc.msg)
			}}); err != nil {
				t.Fatal(err)
			}
			_, err := reg.Dispatch(context.Background(), name, nil)
			if err == nil {
				t.Fatal("no error")
			}
			got := err.Error()
			if strings.Contains(got, "s3cr3t") {
				t.Fatalf("the secret shows")
			}
			if !tc.cut {
				if !strings.HasSuffix(got, tc.msg) {
					t.Fatalf("err = %q", got)
				}
				return
			}
			if len(got) > MaxErrorText+200 {
				t.Fatalf("error is %d bytes, want at most about %d", len(got), MaxErrorText)
			}
			if !strings.Contains(got, "bytes more were cut") {
				t.Fatalf("err = %q…, want it to say it was cut", got[len(got)-100:])
			}
			if i := strings.LastIndex(got, "[REDACTED:"); i >= 0 && !strings.Contains(got[i:], "]") {
				t.Fatalf("a redaction mark was cut in two: %q", got[i:])
			}
		})
	}
}
