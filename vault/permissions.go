package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketPermissions holds the rules a person kept for a project folder
// ("always, in this project"), one JSON row each, keyed by folder, tool
// and prefix (see permissionKey).
var bucketPermissions = []byte("permissions")

// Permission is one kept rule: in the folder Dir, calls of Tool (a native
// tool's name, or "server/tool" for a bridged one) run without a consent
// question. With Prefix set (the shell tool), only a command made of
// those words and then plain arguments is covered (the engine decides
// what matches; see engine.PermissionAllows).
type Permission struct {
	Dir    string `json:"dir"`
	Tool   string `json:"tool"`
	Prefix string `json:"prefix,omitempty"`
	// Unsandboxed runs the shell commands the rule covers outside the
	// shell's sandbox (a shell rule with a prefix only).
	Unsandboxed bool      `json:"unsandboxed,omitempty"`
	Created     time.Time `json:"created"`
}

// AuditGranted is the Outcome of the audit entry keeping a permission
// leaves (Kind "permission"); removing one leaves AuditDeleted.
const AuditGranted = OutcomeGranted

// String renders p as the audit trail and the REPL name it:
// "shell: git status in /home/me/project".
func (p Permission) String() string {
	what := p.Tool
	if p.Prefix != "" {
		what += ": " + p.Prefix
	}
	what += " in " + p.Dir
	if p.Unsandboxed {
		what += " (outside the sandbox)"
	}
	return what
}

func permissionKey(p Permission) []byte {
	return []byte(p.Dir + "\x00" + p.Tool + "\x00" + p.Prefix)
}

// checkPermission refuses a rule that cannot be kept as given.
func checkPermission(p Permission) error {
	switch {
	case p.Dir == "" || !filepath.IsAbs(p.Dir) || filepath.Clean(p.Dir) != p.Dir:
		return fmt.Errorf("vault: a permission's folder must be an absolute, clean path, not %q", p.Dir)
	case p.Tool == "":
		return fmt.Errorf("vault: a permission names the tool it allows")
	case strings.ContainsRune(p.Dir+p.Tool+p.Prefix, 0):
		return fmt.Errorf("vault: a permission cannot hold a NUL byte")
	case p.Unsandboxed && (p.Tool != "shell" || p.Prefix == ""):
		return fmt.Errorf("vault: only a shell rule with a prefix can run its commands outside the sandbox")
	}
	return nil
}

// PermissionAdd keeps p (Created is set now); keeping one already kept
// changes nothing, and keeping one kept with another Unsandboxed replaces
// it. The grant is audited.
func (s *Store) PermissionAdd(p Permission) error {
	if err := checkPermission(p); err != nil {
		return err
	}
	p.Created = time.Now().UTC()
	added := false
	err := s.update(func(tx *bolt.Tx) error {
		b, err := bucket(tx, bucketPermissions)
		if err != nil {
			return err
		}
		key := permissionKey(p)
		if old := b.Get(key); old != nil {
			var kept Permission
			if err := json.Unmarshal(old, &kept); err == nil && kept.Unsandboxed == p.Unsandboxed {
				return nil
			}
		}
		data, err := json.Marshal(p)
		if err != nil {
			return err
		}
		added = true
		return b.Put(key, data)
	})
	if err != nil || !added {
		return err
	}
	if _, err := s.AuditAppend(AuditEntry{Kind: "permission", Subject: p.String(), Outcome: AuditGranted}); err != nil {
		return fmt.Errorf("vault: the permission %s was kept, but its audit entry was not recorded: %w", p, err)
	}
	return nil
}

// PermissionList returns the rules kept for the folder dir ("": for
// every folder), sorted by folder, tool and prefix.
func (s *Store) PermissionList(dir string) ([]Permission, error) {
	var out []Permission
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPermissions)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if dir != "" && !bytes.HasPrefix(k, []byte(dir+"\x00")) {
				return nil
			}
			var p Permission
			if err := json.Unmarshal(v, &p); err != nil {
				return fmt.Errorf("vault: a permission row is damaged: %w", err)
			}
			out = append(out, p)
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool {
		return bytes.Compare(permissionKey(out[i]), permissionKey(out[j])) < 0
	})
	return out, err
}

// PermissionRemove drops the rule with p's folder, tool and prefix; a
// missing one is ErrNotFound. The removal is audited.
func (s *Store) PermissionRemove(p Permission) error {
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPermissions)
		key := permissionKey(p)
		if b == nil || b.Get(key) == nil {
			return fmt.Errorf("%w: permission %s: nothing to remove", ErrNotFound, p)
		}
		return b.Delete(key)
	})
	if err != nil {
		return err
	}
	return s.auditDelete("permission", p.String())
}
