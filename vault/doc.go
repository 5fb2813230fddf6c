// Package vault is tai's single embedded store: MCP servers and their
// profile enablement, tool pins and cached tool lists, secrets, spilled
// records, model profiles and the tamper-evident audit trail, all in one
// bbolt file. It depends on nothing else in tai.
//
//	s, err := vault.Open(vault.DefaultPath(), nil)
//	if err != nil { ... }
//	defer s.Close()
//	_ = s.SecretSet("github-token", "ghp_…", nil)
//	fmt.Println(s.Redact("token is ghp_…")) // token is [REDACTED:github-token]
//
// # Records
//
// Records are stored texts (spilled tool results, mostly), addressed by
// ids like "r12" that are never reused. The vault keeps them under a
// retention policy applied by every RecordPut, in the same transaction:
// records older than Options.RecordMaxAge (if set) are dropped, then the
// oldest records go until the new one fits under Options.RecordLimit
// (DefaultRecordLimit, 256 MiB, unless set). A text larger than the limit on
// its own is refused. RecordDelete removes one record, RecordPrune applies
// the policy on demand, and RecordGet or RecordDelete on a missing id says
// whether it was never stored, dropped by the policy, or deleted. bbolt
// never shrinks its file, but it reuses the pages freed, so the file stays
// near the limit instead of growing with every put.
//
// # Interactive passphrases
//
// Options.Passphrase is a source that answers the same every time
// (TAI_VAULT_PASSPHRASE): it is asked once, and a wrong answer is
// remembered. Options.PassphrasePrompt asks a person: each access that
// needs the seal key asks up to PassphraseTries times, and a wrong, empty
// or cancelled answer is forgotten, so the next access asks again.
//
// # The audit trail
//
// AuditAppend writes each entry to a journal beside the vault file with
// one write(2) and makes it durable within FlushDelay, folding the journal
// into the vault in batches and at Close (see JournalSuffix for what a
// crash and a power loss can lose).
//
// Every entry carries a SHA-256 hash over its fields and the hash of the
// entry before, and a meta row records the head (the last entry's number
// and hash). On an unsealed vault that only finds clumsy edits: anyone who
// can write the file can rewrite the trail from any entry on, or cut
// entries off the end, and recompute every hash and the head.
//
// Sealing keys the trail. The first Seal makes a random audit key, kept
// inside the sealed check value (so it can be neither read nor removed
// without the passphrase, and survives passphrase changes), and anchors the
// trail: the head as it stands gets an HMAC-SHA256 under that key. From then
// on every entry and the head carry one, and AuditVerify checks them, so
// rewriting entries, cutting them off the end or moving the head back is
// found unless it was done with the passphrase. Entries from before the
// seal keep their plain hashes. On a sealed vault AuditAppend and
// AuditVerify need the passphrase; AuditAppend does not record an entry it
// cannot sign (its error wraps ErrNoPassphrase). What no key can find is a
// rollback of the whole file, or of the audit bucket and its head together,
// to an earlier copy: the trail as it stood then verifies.
//
// It imports nothing of tai; every other package may import it, except those under mcp.
package vault
