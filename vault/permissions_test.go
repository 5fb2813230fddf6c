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
