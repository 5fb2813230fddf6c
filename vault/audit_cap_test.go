package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Every text field of an audit entry is capped: a megabyte subject keeps
// its start, the hash of the whole and its length, and the chain holds.
func TestAuditFieldsAreCapped(t *testing.T) {
	s := newStore(t, nil)
	s.AddRedaction("tok", "tok-secret-value")
	huge := strings.Repeat("Z", 5<<20)
	other := strings.Repeat("Z", 5<<20-1) + "Y"
	atCut := strings.Repeat("s", AuditFieldMax-4) + "tok-secret-value" + strings.Repeat("t", 1000)
	in := []AuditEntry{
		{Kind: huge, Subject: huge, Digest: huge, Outcome: huge, Session: huge},
		{Kind: "tool", Subject: other, Outcome: "ok"},
		{Kind: "tool", Subject: atCut, Outcome: "ok"},
		{Kind: "tool", Subject: "short", Outcome: "ok"},
		{Kind: "tool", Subject: strings.Repeat("\x01<\"", 3000), Outcome: "ok"},
	}
	var out []AuditEntry
	for _, e := range in {
		got, err := s.AuditAppend(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got)
	}
	sum := sha256.Sum256([]byte(huge))
	want := strings.Repeat("Z", AuditFieldMax) + fmt.Sprintf("…[sha256:%s] (%d bytes)", hex.EncodeToString(sum[:8]), len(huge))
	for _, f := range []string{out[0].Kind, out[0].Subject, out[0].Digest, out[0].Outcome, out[0].Session} {
		if f != want {
			t.Fatalf("a capped field is %.300q…, want %q", f, want)
		}
	}
	if out[1].Subject == out[0].Subject || !strings.HasSuffix(out[1].Subject, fmt.Sprintf("(%d bytes)", len(other))) {
		t.Errorf("two long subjects that differ at the end are capped alike: %q", out[1].Subject)
	}
	if !strings.Contains(out[2].Subject, "[REDACTED:tok]…[sha256:") || strings.Contains(out[2].Subject, "tok-secret") {
		t.Errorf("the redaction mark at the cap was cut in two: %q", out[2].Subject)
	}
	if out[3].Subject != "short" {
		t.Errorf("a short subject changed: %q", out[3].Subject)
	}
	if enc, _ := json.Marshal(out[4].Subject); len(enc) > AuditFieldMax+60 {
		t.Errorf("a subject of control characters takes %d bytes of JSON", len(enc))
	}
	tail, err := s.AuditTail(0, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tail {
		data, _ := json.Marshal(e)
		if len(data) > 5*(AuditFieldMax+200)+400 {
			t.Errorf("entry %d is %d bytes of JSON", e.Seq, len(data))
		}
	}
	if n, err := s.AuditVerify(); n != len(in) || err != nil {
		t.Fatalf("AuditVerify = %d, %v", n, err)
	}
}
