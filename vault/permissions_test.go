package vault

import (
	"errors"
	"testing"
)

// Rules are kept per folder, listed per folder or all, removed one at a
// time, and every grant and removal leaves an audit entry.
func TestPermissions(t *testing.T) {
	s := newStore(t, nil)
	rules := []Permission{
		{Dir: "/p/one", Tool: "shell", Prefix: "git status"},
		{Dir: "/p/one", Tool: "edit_file"},
		{Dir: "/p/one2", Tool: "shell", Prefix: "go test"},
	}
	for _, p := range rules {
		if err := s.PermissionAdd(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PermissionAdd(rules[0]); err != nil {
		t.Fatalf("keeping a rule again: %v", err)
	}
	one, err := s.PermissionList("/p/one")
	if err != nil || len(one) != 2 || one[0].Tool != "edit_file" || one[1].Prefix != "git status" || one[0].Created.IsZero() {
		t.Fatalf("list /p/one = %+v, %v", one, err)
	}
	all, err := s.PermissionList("")
	if err != nil || len(all) != 3 {
		t.Fatalf("list all = %+v, %v", all, err)
	}
	if err := s.PermissionRemove(rules[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.PermissionRemove(rules[0]); !errors.Is(err, ErrNotFound) {
		t.Fatalf("removing it again: %v, want ErrNotFound", err)
	}
	if one, _ := s.PermissionList("/p/one"); len(one) != 1 {
		t.Fatalf("after removal: %+v", one)
	}
	for _, bad := range []Permission{{Dir: "rel", Tool: "x"}, {Dir: "/a/../b", Tool: "x"}, {Dir: "/a"}, {Dir: "/a", Tool: "x\x00y"}} {
		if err := s.PermissionAdd(bad); err == nil {
			t.Errorf("PermissionAdd(%+v) kept it", bad)
		}
	}
	tail, err := s.AuditTail(10, "permission")
	if err != nil {
		t.Fatal(err)
	}
	granted, deleted := 0, 0
	for _, e := range tail {
		switch e.Outcome {
		case AuditGranted:
			granted++
		case AuditDeleted:
			deleted++
		}
	}
	if granted != 3 || deleted != 1 {
		t.Fatalf("audit: %d granted, %d deleted; want 3 and 1 (%+v)", granted, deleted, tail)
	}
}

// A shell rule with a prefix can run its commands outside the sandbox:
// kept, listed and audited with that mark; keeping the same rule with the
// other mark replaces it; any other rule cannot carry it.
func TestPermissionUnsandboxed(t *testing.T) {
	s := newStore(t, nil)
	lift := Permission{Dir: "/p/one", Tool: "shell", Prefix: "git push", Unsandboxed: true}
	if err := s.PermissionAdd(Permission{Dir: "/p/one", Tool: "shell", Prefix: "git push"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PermissionAdd(lift); err != nil {
		t.Fatal(err)
	}
	list, err := s.PermissionList("/p/one")
	if err != nil || len(list) != 1 || !list[0].Unsandboxed {
		t.Fatalf("list = %+v, %v; want the one rule, outside the sandbox", list, err)
	}
	tail, err := s.AuditTail(1, "permission")
	if err != nil || len(tail) != 1 || tail[0].Subject != "shell: git push in /p/one (outside the sandbox)" || tail[0].Outcome != AuditGranted {
		t.Fatalf("audit = %+v, %v", tail, err)
	}
	for _, p := range []Permission{
		{Dir: "/p/one", Tool: "shell", Unsandboxed: true},
		{Dir: "/p/one", Tool: "edit_file", Unsandboxed: true},
	} {
		if err := s.PermissionAdd(p); err == nil {
			t.Errorf("%s was kept", p)
		}
	}
	if err := s.PermissionRemove(Permission{Dir: "/p/one", Tool: "shell", Prefix: "git push"}); err != nil {
		t.Fatal(err)
	}
}
