package stdlib_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// contextFiles runs context.instructions(dir) and returns the texts sent
// and the paths skipped (with why), one string each.
func contextFiles(t *testing.T, dir string) (sent, skipped string) {
	t.Helper()
	got := run(t, `
		local keep, _, skipped = require("tai.context").instructions(`+strconv.Quote(dir)+`)
		local texts, names = {}, {}
		for _, f in ipairs(keep) do texts[#texts + 1] = f.text end
		for _, s in ipairs(skipped) do names[#names + 1] = s.path .. ": " .. s.why end
		return table.concat(texts, "|"), table.concat(names, "|")`)
	return got[0].(string), got[1].(string)
}

func write(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
}

// TestContextIsThePersons: a .git and an AGENTS.md another user planted
// in a folder every user can write to (a sticky /tmp) are not used, nor a
// file owned by another user; the walk never goes above the home folder;
// a skipped file is named.
func TestContextIsThePersons(t *testing.T) {
	base := t.TempDir()
	t.Setenv("HOME", filepath.Join(base, "home"))

	t.Run("world-writable folder", func(t *testing.T) {
		shared := filepath.Join(base, "tmp")
		if err := os.MkdirAll(filepath.Join(shared, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(shared, 0o1777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(shared, "AGENTS.md"), "FOREIGN planted", 0o644)
		work := filepath.Join(shared, "mywork")
		write(t, filepath.Join(work, "AGENTS.md"), "MINE", 0o644)
		sent, skipped := contextFiles(t, work)
		if sent != "MINE" || skipped != "" {
			t.Fatalf("sent %q, skipped %q; want only MINE (the planted .git is no project root)", sent, skipped)
		}
		// Inside a project of the person's, a folder every user can write
		// to: its file is skipped, and named.
		repo := filepath.Join(base, "repo")
		if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(repo, "AGENTS.md"), "REPO", 0o644)
		drop := filepath.Join(repo, "drop")
		write(t, filepath.Join(drop, "AGENTS.md"), "FOREIGN dropped", 0o644)
		if err := os.Chmod(drop, 0o1777|os.ModeSticky); err != nil {
			t.Fatal(err)
		}
		sent, skipped = contextFiles(t, drop)
		if sent != "REPO" || skipped != filepath.Join(drop, "AGENTS.md")+": its folder "+drop+" is writable by every user" {
			t.Fatalf("sent %q, skipped %q", sent, skipped)
		}
	})

	t.Run("another user's file", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("giving a file to another user needs root; the world-writable case above still runs")
		}
		// A .git of another user's is no project root.
		theirs := filepath.Join(base, "srv")
		write(t, filepath.Join(theirs, "AGENTS.md"), "FOREIGN root", 0o644)
		if err := os.MkdirAll(filepath.Join(theirs, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(filepath.Join(theirs, ".git"), 4242, 4242); err != nil {
			t.Fatal(err)
		}
		work := filepath.Join(theirs, "proj")
		write(t, filepath.Join(work, "AGENTS.md"), "MINE", 0o644)
		if sent, skipped := contextFiles(t, work); sent != "MINE" || skipped != "" {
			t.Fatalf("sent %q, skipped %q", sent, skipped)
		}
		// In the person's project, a file of another user's is skipped.
		repo := filepath.Join(base, "own")
		if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(repo, "AGENTS.md"), "FOREIGN owned", 0o644)
		if err := os.Chown(filepath.Join(repo, "AGENTS.md"), 4242, 4242); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(repo, "pkg", "AGENTS.md"), "PKG", 0o644)
		sent, skipped := contextFiles(t, filepath.Join(repo, "pkg"))
		if sent != "PKG" || !strings.Contains(skipped, filepath.Join(repo, "AGENTS.md")+": it belongs to another user (uid 4242)") {
			t.Fatalf("sent %q, skipped %q", sent, skipped)
		}
	})

	t.Run("above the home folder", func(t *testing.T) {
		if err := os.MkdirAll(filepath.Join(base, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(base, "AGENTS.md"), "ABOVE home", 0o644)
		write(t, filepath.Join(base, "home", "AGENTS.md"), "HOME", 0o644)
		work := filepath.Join(base, "home", "proj")
		write(t, filepath.Join(work, "AGENTS.md"), "PROJ", 0o644)
		if sent, _ := contextFiles(t, work); sent != "PROJ" {
			t.Fatalf("sent %q; want PROJ alone (no .git below the home folder)", sent)
		}
		if err := os.MkdirAll(filepath.Join(base, "home", ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if sent, _ := contextFiles(t, work); sent != "HOME|PROJ" {
			t.Fatalf("sent %q; want HOME|PROJ", sent)
		}
	})
}

// TestContextReadsClaudeOrGeminiWithoutAgents: a folder with no AGENTS.md
// gives its CLAUDE.md (else its GEMINI.md); one with an AGENTS.md gives
// that alone.
func TestContextReadsClaudeOrGeminiWithoutAgents(t *testing.T) {
	base := t.TempDir()
	t.Setenv("HOME", base)
	repo := filepath.Join(base, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(repo, "CLAUDE.md"), "CLAUDE", 0o644)
	write(t, filepath.Join(repo, "GEMINI.md"), "GEMINI", 0o644)
	gem := filepath.Join(repo, "gem")
	write(t, filepath.Join(gem, "GEMINI.md"), "GEMINI-ONLY", 0o644)
	both := filepath.Join(gem, "both")
	write(t, filepath.Join(both, "AGENTS.md"), "AGENTS", 0o644)
	write(t, filepath.Join(both, "CLAUDE.md"), "NOT-READ", 0o644)
	if sent, _ := contextFiles(t, repo); sent != "CLAUDE" {
		t.Errorf("repo: sent %q, want CLAUDE", sent)
	}
	if sent, _ := contextFiles(t, gem); sent != "CLAUDE|GEMINI-ONLY" {
		t.Errorf("gem: sent %q, want CLAUDE|GEMINI-ONLY", sent)
	}
	if sent, _ := contextFiles(t, both); sent != "CLAUDE|GEMINI-ONLY|AGENTS" {
		t.Errorf("both: sent %q, want CLAUDE|GEMINI-ONLY|AGENTS", sent)
	}
}
