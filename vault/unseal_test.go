package vault

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// logicalContent returns every key and value of the vault at path, bucket
// by bucket (nested buckets too), as "bucket/…/key" -> value.
func logicalContent(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]string{}
	var walk func(prefix string, b *bolt.Bucket) error
	walk = func(prefix string, b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(prefix+string(k)+"/", b.Bucket(k))
			}
			out[prefix+string(k)] = string(v)
			return nil
		})
	}
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(string(name)+"/", b) })
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// unsealFixture is a vault holding secrets (an OAuth token among them),
// servers with headers, a spilled record and an audit trail from before
// and after its seal with passphrase "right".
func unsealFixture(t *testing.T) (*Store, string) {
	t.Helper()
	s := newStore(t, nil)
	for i := range 10 {
		if err := s.SecretSet(fmt.Sprintf("s%d", i), fmt.Sprintf("fixture-secret-%d", i), map[string]any{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
	tokens := `{"access_token":"oauth-access-value","refresh_token":"oauth-refresh-value"}`
	if err := s.SecretSet("mcp-oauth-remote-tokens", tokens, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ServerPut(Server{Name: "remote", Transport: "http", URL: "https://mcp.example.com/mcp",
		Headers: map[string]string{"Authorization": "Bearer fixture-header-1"},
		OAuth:   &ServerOAuth{ClientID: "client-1"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: fmt.Sprintf("before %d", i), Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	rec, err := s.RecordPut("a long tool result "+strings.Repeat("x", 5000), map[string]any{"tool": "t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Seal("right"); err != nil {
		t.Fatal(err)
	}
	if err := s.ServerPut(Server{Name: "local", Transport: "stdio", Command: "srv", Headers: map[string]string{"X-Key": "fixture-header-2"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: fmt.Sprintf("sealed %d", i), Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	return s, rec
}

func TestUnsealRoundTrip(t *testing.T) {
	s, rec := unsealFixture(t)
	n, err := s.Unseal("right")
	if err != nil {
		t.Fatal(err)
	}
	if n < 6 {
		t.Fatalf("Unseal verified %d entries, want the whole trail (at least 6)", n)
	}
	if sealed, err := s.Sealed(); sealed || err != nil {
		t.Fatalf("Sealed after Unseal = %v, %v", sealed, err)
	}
	// Stored in the clear: no sealed field, no seal record, no MAC.
	content := logicalContent(t, s.Path())
	for k, v := range content {
		switch {
		case strings.Contains(v, `"sealed":`), strings.Contains(v, `"headers_sealed":`):
			t.Fatalf("%s is still sealed after Unseal: %s", k, v)
		case strings.Contains(v, `"mac":`):
			t.Fatalf("%s still carries a seal MAC after Unseal: %s", k, v)
		case k == "meta/seal", k == "meta/audit_anchor":
			t.Fatalf("%s is left after Unseal", k)
		}
	}

	// Another tai, with no passphrase at all, reads everything.
	check := func(o *Store, wantEntries int) {
		t.Helper()
		for i := range 10 {
			v, meta, err := o.SecretGet(fmt.Sprintf("s%d", i))
			if err != nil || v != fmt.Sprintf("fixture-secret-%d", i) || meta["i"] != float64(i) {
				t.Fatalf("s%d = %q, %v, %v", i, v, meta, err)
			}
		}
		if v, _, err := o.SecretGet("mcp-oauth-remote-tokens"); err != nil || !strings.Contains(v, "oauth-refresh-value") {
			t.Fatalf("the OAuth tokens = %q, %v", v, err)
		}
		remote, err := o.ServerGet("remote")
		if err != nil || remote.Headers["Authorization"] != "Bearer fixture-header-1" || remote.OAuth == nil || remote.OAuth.ClientID != "client-1" {
			t.Fatalf("remote = %+v, %v", remote, err)
		}
		if local, err := o.ServerGet("local"); err != nil || local.Headers["X-Key"] != "fixture-header-2" {
			t.Fatalf("local = %+v, %v", local, err)
		}
		if text, _, err := o.RecordGet(rec, 0, 0); err != nil || !strings.HasPrefix(text, "a long tool result xxx") {
			t.Fatalf("the spilled record = %.40q, %v", text, err)
		}
		got, err := o.AuditVerify()
		if err != nil || got != wantEntries {
			t.Fatalf("AuditVerify = %d, %v; want %d", got, err, wantEntries)
		}
	}
	plain, err := Open(s.Path(), &Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	check(plain, n+1)
	tail, err := plain.AuditTail(1, "")
	if err != nil || len(tail) != 1 || tail[0].Subject != AuditUnsealed || !strings.Contains(tail[0].Outcome, fmt.Sprintf("through entry %d", n)) {
		t.Fatalf("the last audit entry = %+v, %v; want the unsealed entry", tail, err)
	}
	if _, err := plain.AuditAppend(AuditEntry{Kind: "tool", Subject: "after", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	check(plain, n+2)
	check(s, n+2)

	// Sealed again under another passphrase: a new audit key, anchored
	// afresh; the trail verifies with it, and unseals again.
	if err := s.Seal("second"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "resealed", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	again := mustOpen(t, s.Path(), "second")
	check(again, n+3)
	if _, err := again.Unseal("right"); !errors.Is(err, ErrWrongPassphrase) {
		t.Fatalf("Unseal with the old passphrase = %v, want ErrWrongPassphrase", err)
	}
	m, err := again.Unseal("second")
	if err != nil || m != n+3 {
		t.Fatalf("second Unseal = %d, %v; want %d", m, err, n+3)
	}
	check(plain, n+4)
	if _, err := plain.Unseal("second"); !errors.Is(err, ErrNotSealed) {
		t.Fatalf("Unseal of an unsealed vault = %v, want ErrNotSealed", err)
	}
}

func TestUnsealWrongPassphraseChangesNothing(t *testing.T) {
	s, _ := unsealFixture(t)
	s.Close()
	before := logicalContent(t, s.Path())
	o, err := Open(s.Path(), &Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for _, pass := range []string{"xyzzy-guess", "Right", "right "} {
		_, err := o.Unseal(pass)
		if !errors.Is(err, ErrWrongPassphrase) || !strings.Contains(err.Error(), "nothing was changed") || strings.Contains(err.Error(), pass) {
			t.Fatalf("Unseal(%q) = %v, want ErrWrongPassphrase saying nothing was changed, without the passphrase", pass, err)
		}
	}
	if _, err := o.Unseal(""); err == nil || !strings.Contains(err.Error(), "empty passphrase") {
		t.Fatalf("Unseal(\"\") = %v", err)
	}
	if after := logicalContent(t, s.Path()); !maps.Equal(before, after) {
		t.Fatal("the vault's content changed after Unseal with a wrong passphrase")
	}
	if sealed, err := o.Sealed(); !sealed || err != nil {
		t.Fatalf("Sealed = %v, %v", sealed, err)
	}
}

func TestUnsealRefusesATamperedTrail(t *testing.T) {
	s, _ := unsealFixture(t)
	if _, err := s.AuditVerify(); err != nil { // folds the journal into the file
		t.Fatal(err)
	}
	s.Close()
	// Rewrite the last entry as someone without the passphrase could:
	// new outcome, hash recomputed, head moved with it, MAC kept.
	db, err := bolt.Open(s.Path(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		k, v := tx.Bucket(bucketAudit).Cursor().Last()
		var e AuditEntry
		if err := json.Unmarshal(v, &e); err != nil {
			return err
		}
		e.Outcome = "denied"
		e.Hash = auditHash(e)
		data, _ := json.Marshal(e)
		if err := tx.Bucket(bucketAudit).Put(k, data); err != nil {
			return err
		}
		return putMark(tx, auditHeadKey, macHead, binary.BigEndian.Uint64(k), e.Hash, nil)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := logicalContent(t, s.Path())

	o, err := Open(s.Path(), &Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	_, err = o.Unseal("right")
	var brk *AuditBreak
	if !errors.As(err, &brk) || !strings.Contains(err.Error(), "stays sealed") || !strings.Contains(err.Error(), "restore a copy") {
		t.Fatalf("Unseal of a tampered trail = %v, want an AuditBreak saying the vault stays sealed and what to do", err)
	}
	if after := logicalContent(t, s.Path()); !maps.Equal(before, after) {
		t.Fatal("the vault's content changed after a refused Unseal")
	}
	if sealed, err := o.Sealed(); !sealed || err != nil {
		t.Fatalf("Sealed = %v, %v", sealed, err)
	}
}

// TestUnsealedFileHoldsNoSealLeft mirrors TestSealedFileHoldsNoPlaintext:
// after Unseal no ciphertext, salt or check value of the seal is left
// anywhere in the file, every free page is zero, and a secret deleted
// while sealed is nowhere.
func TestUnsealedFileHoldsNoSealLeft(t *testing.T) {
	s := newStore(t, nil)
	secret := func(i int) string { return fmt.Sprintf("PLAINTEXT-%04d-%s", i, strings.Repeat("s", 40)) }
	for i := range 200 {
		if err := s.SecretSet(fmt.Sprintf("n%d", i), secret(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		if err := s.ServerPut(Server{Name: fmt.Sprintf("srv%d", i), Transport: "http", Headers: map[string]string{"Authorization": fmt.Sprintf("HEADERVALUE-%04d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Seal("pw"); err != nil {
		t.Fatal(err)
	}
	// Overwritten and deleted while sealed: their ciphertext is freed.
	for i := range 30 {
		if err := s.SecretSet(fmt.Sprintf("n%d", i), secret(1000+i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for i := 30; i < 60; i++ {
		if err := s.SecretDelete(fmt.Sprintf("n%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var sealedBits [][]byte
	for k, v := range logicalContent(t, s.Path()) {
		switch {
		case strings.HasPrefix(k, "secrets/"):
			var row secretRow
			if err := json.Unmarshal([]byte(v), &row); err != nil || row.Sealed == nil {
				t.Fatalf("%s = %s, want a sealed row", k, v)
			}
			sealedBits = append(sealedBits, row.Sealed)
		case strings.HasPrefix(k, "mcp_servers/"):
			var row serverRow
			if err := json.Unmarshal([]byte(v), &row); err != nil || row.HeadersSealed == nil {
				t.Fatalf("%s = %s, want sealed headers", k, v)
			}
			sealedBits = append(sealedBits, row.HeadersSealed)
		case k == "meta/seal":
			var m sealMeta
			if err := json.Unmarshal([]byte(v), &m); err != nil {
				t.Fatal(err)
			}
			sealedBits = append(sealedBits, m.Check, m.Salt)
		}
	}
	if len(sealedBits) < 170+20+2 {
		t.Fatalf("control: found %d sealed values, want every secret, header and the seal record", len(sealedBits))
	}
	if _, err := s.Unseal("pw"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, err := os.ReadFile(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range sealedBits {
		// A ciphertext is a nonce and at least a tag: 16 bytes of it are
		// enough to be sure it is that one.
		if bytes.Contains(raw, b[:16]) {
			t.Fatalf("the unsealed vault file still holds sealed bytes %x…", b[:16])
		}
	}
	for i := 30; i < 60; i++ {
		if bytes.Contains(raw, []byte(secret(i))) {
			t.Fatalf("the unsealed vault file holds %q, deleted while sealed", secret(i))
		}
	}
	if !bytes.Contains(raw, []byte(secret(1010))) || !bytes.Contains(raw, []byte("HEADERVALUE-0007")) {
		t.Fatal("control: the unsealed file should hold the live secrets in the clear")
	}
	// Opened read-write: a read-only bbolt does not load the freelist.
	db, err := bolt.Open(s.Path(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	pageSize := db.Info().PageSize
	if err := db.View(func(tx *bolt.Tx) error {
		for id := 2; int64(id)*int64(pageSize) < tx.Size(); id++ {
			info, err := tx.Page(id)
			if err != nil {
				return err
			}
			if info != nil && info.Type == "free" {
				page := raw[id*pageSize : (id+1)*pageSize]
				if binary.LittleEndian.Uint16(page[8:]) == 0x10 {
					// A freelist that a commit after the scrub (Close's
					// fold) superseded: page numbers only.
					continue
				}
				if !bytes.Equal(page, make([]byte, pageSize)) {
					t.Fatalf("free page %d is not zeroed: %q", id, bytes.Trim(page, "\x00")[:200])
				}
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestUnsealWhileAnotherTaiHoldsTheKey(t *testing.T) {
	s, _ := unsealFixture(t)
	other := mustOpen(t, s.Path(), "right")
	defer other.Close()
	if v, _, err := other.SecretGet("s1"); err != nil || v != "fixture-secret-1" {
		t.Fatalf("other SecretGet = %q, %v", v, err)
	}
	// Signed by the other tai, still in the journal when the seal goes.
	if _, err := other.AuditAppend(AuditEntry{Kind: "tool", Subject: "other, sealed", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Unseal("right")
	if err != nil {
		t.Fatal(err)
	}
	if v, _, err := other.SecretGet("s1"); err != nil || v != "fixture-secret-1" {
		t.Fatalf("other SecretGet after Unseal = %q, %v", v, err)
	}
	if err := other.SecretSet("s1", "changed-after-unseal", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := other.AuditAppend(AuditEntry{Kind: "tool", Subject: "other, unsealed", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	if got := other.Redact("x changed-after-unseal fixture-secret-2 y"); got != "x [REDACTED:s1] [REDACTED:s2] y" {
		t.Fatalf("other Redact = %q", got)
	}
	for _, st := range []*Store{s, other} {
		if got, err := st.AuditVerify(); err != nil || got != n+2 {
			t.Fatalf("AuditVerify = %d, %v; want %d", got, err, n+2)
		}
	}
	if v, _, err := s.SecretGet("s1"); err != nil || v != "changed-after-unseal" {
		t.Fatalf("SecretGet = %q, %v", v, err)
	}
}

// TestUnsealReachesAServingTai: a tai that serves (prompts refused) and
// never had the key fails on sealed values while the vault is sealed
// under it, and reads them again, with its audit appends, once another
// tai unseals it: nothing needs restarting.
func TestUnsealReachesAServingTai(t *testing.T) {
	s := newStore(t, nil)
	if err := s.SecretSet("k", "served-secret-value", nil); err != nil {
		t.Fatal(err)
	}
	served, err := Open(s.Path(), &Options{PassphrasePrompt: func(int, error) (string, error) {
		t.Fatal("the serving tai was asked for the passphrase")
		return "", nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer served.Close()
	defer served.RefusePrompts("restart it with TAI_VAULT_PASSPHRASE set")()
	if v, _, err := served.SecretGet("k"); err != nil || v != "served-secret-value" {
		t.Fatalf("SecretGet before the seal = %q, %v", v, err)
	}
	if err := s.Seal("pw"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := served.SecretGet("k"); !errors.Is(err, ErrNoPassphrase) || !strings.Contains(err.Error(), "restart it") {
		t.Fatalf("SecretGet while sealed = %v, want the refusal", err)
	}
	if _, err := s.Unseal("pw"); err != nil {
		t.Fatal(err)
	}
	if v, _, err := served.SecretGet("k"); err != nil || v != "served-secret-value" {
		t.Fatalf("SecretGet after Unseal = %q, %v", v, err)
	}
	if _, err := served.AuditAppend(AuditEntry{Kind: "tool", Subject: "served call", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	if _, err := served.AuditVerify(); err != nil {
		t.Fatal(err)
	}
}

// benchVault is a vault of 300 secrets, 20 servers with headers and 2000
// audit entries, half of them after its seal with passphrase "pw".
func benchVault(b *testing.B) *Store {
	s := newStore(b, nil)
	for i := range 300 {
		if err := s.SecretSet(fmt.Sprintf("n%d", i), fmt.Sprintf("bench-secret-%04d-%s", i, strings.Repeat("s", 32)), nil); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 20 {
		if err := s.ServerPut(Server{Name: fmt.Sprintf("srv%d", i), Transport: "http", Headers: map[string]string{"Authorization": fmt.Sprintf("bench-header-%04d", i)}}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 1000 {
		if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: fmt.Sprintf("call %d", i), Outcome: "ok"}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Seal("pw"); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: fmt.Sprintf("sealed call %d", i), Outcome: "ok"}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkSealThenUnseal measures a seal and an unseal of the same
// vault, each one transaction and a scrub of the free pages, with the
// cheap test KDF: what differs is the work on the rows (Unseal also
// checks and unsigns the trail).
func BenchmarkSealThenUnseal(b *testing.B) {
	s := benchVault(b)
	if _, err := s.Unseal("pw"); err != nil {
		b.Fatal(err)
	}
	b.Run("Seal", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if sealed, _ := s.Sealed(); sealed {
				if _, err := s.Unseal("pw"); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			if err := s.Seal("pw"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Unseal", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if sealed, _ := s.Sealed(); !sealed {
				if err := s.Seal("pw"); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			if _, err := s.Unseal("pw"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestUnsealRefusesATrailCutUnderItsJournal: entries cut off the end of
// the trail in the file, with entries still in the journal after them,
// are refused before anything is folded or changed.
func TestUnsealRefusesATrailCutUnderItsJournal(t *testing.T) {
	s, _ := unsealFixture(t)
	if _, err := s.AuditVerify(); err != nil { // folds what the fixture wrote
		t.Fatal(err)
	}
	if _, err := s.AuditAppend(AuditEntry{Kind: "tool", Subject: "in the journal", Outcome: "ok"}); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(s.Path(), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketAudit).Cursor().Last()
		return tx.Bucket(bucketAudit).Delete(k)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	before := logicalContent(t, s.Path())
	journal, err := os.ReadFile(s.Path() + JournalSuffix)
	if err != nil {
		t.Fatal(err)
	}
	o, err := Open(s.Path(), &Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.Unseal("right"); err == nil || !strings.HasPrefix(err.Error(), "vault: run tai.vault.audit_verify()") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("Unseal of a cut trail = %v, want it refused, the fix first", err)
	}
	if after := logicalContent(t, s.Path()); !maps.Equal(before, after) {
		t.Fatal("the vault's content changed after a refused Unseal")
	}
	if now, err := os.ReadFile(s.Path() + JournalSuffix); err != nil || !bytes.Equal(now, journal) {
		t.Fatalf("the journal changed after a refused Unseal (%v)", err)
	}
}
