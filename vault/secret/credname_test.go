package secret

import "testing"

// TestCredentialName: names are judged by whole words, so a file's path
// (MEMORY_FILE_PATH) or a git author is no credential, while GitHub's
// personal access tokens (GITHUB_PAT, githubPat) and every name with a
// credential's word still are.
func TestCredentialName(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"GITHUB_TOKEN", true},
		{"OPENAI_API_KEY", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"DB_PASSWORD", true},
		{"FTP_PASSWD", true},
		{"REDIS_PASS", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},
		{"stripe_secret", true},
		{"GITHUB_PAT", true},
		{"GH_PAT", true},
		{"PAT", true},
		{"githubPat", true},
		{"apiKey", true},
		{"OPENAI_APIKEY", true},
		{"BASIC_AUTH", true},
		{"TAI_VAULT_PASSPHRASE", true},
		{"GPG_PASSPHRASE", true},
		{"MEMORY_FILE_PATH", false},
		{"PATH", false},
		{"LD_LIBRARY_PATH", false},
		{"PATTERN", false},
		{"GIT_AUTHOR_NAME", false},
		{"SSH_AUTH_SOCK", false},
		{"MONKEY_COUNT", false},
		{"KEYBOARD", false},
		{"HOME", false},
		{"", false},
	} {
		if got := CredentialName(tt.name); got != tt.want {
			t.Errorf("CredentialName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
