package vault

// The outcome words tai records and reports, each declared once here: of
// a tool call (its audit entry and a turn's tool event), of the vault's
// own audit entries, and of a server an add or an import met. Lua sees
// them as tai.outcome (Outcomes: tai.outcome.DENIED is "denied").
const (
	// OutcomeOK: the call ran and its result is no error.
	OutcomeOK = "ok"
	// OutcomeError: the call ran and failed, or its result is an error.
	OutcomeError = "error"
	// OutcomeDenied: the call was not approved, so it did not run.
	OutcomeDenied = "denied"
	// OutcomeCancelled: the call was stopped (Ctrl-C, Esc, a timeout).
	OutcomeCancelled = "cancelled"
	// OutcomeUnknown: the model called a tool that does not exist.
	OutcomeUnknown = "unknown"
	// OutcomeGranted: a permission rule was kept.
	OutcomeGranted = "granted"
	// OutcomeDeleted: a secret, record, rule or server was deleted.
	OutcomeDeleted = "deleted"
	// OutcomeAdded: a server was verified and stored.
	OutcomeAdded = "added"
	// OutcomeSkipped: a server of that name is registered already.
	OutcomeSkipped = "skipped"
	// OutcomeRefused: a server was not stored, for a reason given.
	OutcomeRefused = "refused"
)

// Outcomes returns the outcome words by the names Lua sees them under
// (tai.outcome.OK, …).
func Outcomes() map[string]string {
	return map[string]string{
		"OK": OutcomeOK, "ERROR": OutcomeError, "DENIED": OutcomeDenied, "CANCELLED": OutcomeCancelled,
		"UNKNOWN": OutcomeUnknown, "GRANTED": OutcomeGranted, "DELETED": OutcomeDeleted,
		"ADDED": OutcomeAdded, "SKIPPED": OutcomeSkipped, "REFUSED": OutcomeRefused,
	}
}
