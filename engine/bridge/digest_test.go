package bridge

import (
	"testing"

	"tai/mcp"
	secretrule "tai/vault/secret"
)

// TestDigestStable: the consent digest of a fixed set of entries is the
// one stored consents hold. A field added to spawn (or to what it digests,
// such as mcp.Sandbox) that moves these digests makes every server a
// person consented to ask again: give it omitempty and a zero value for
// the entries of before, or change the golden knowingly.
func TestDigestStable(t *testing.T) {
	none := func(string) string { return "" }
	vaulted := func(n string) string {
		if n == "API_KEY" {
			return "a vault secret"
		}
		return ""
	}
	cases := []struct {
		name   string
		e, raw mcp.Entry
		secret func(string) string
		runIn  string
		values map[string]string
		want   string
	}{
		{
			name: "stdio bare",
			e:    mcp.Entry{Name: "bare", Transport: mcp.TransportStdio, Command: "srv"},
			want: "162a474635603b092346260d68a7e293",
		},
		{
			name: "stdio args env cwd grants",
			e: mcp.Entry{Name: "files", Transport: mcp.TransportStdio, Command: "npx",
				Args: []string{"-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/home/ann/notes"},
				Env:  map[string]string{"MEMORY_FILE_PATH": "/home/ann/mem.json", "API_KEY": "s3cret", "DEBUG": "1"},
				Cwd:  "/home/ann/proj",
				Sandbox: &mcp.Sandbox{Read: []string{"/home/ann/notes", "/srv/data"}, Write: []string{"/home/ann/out"},
					NoNetwork: true, Required: true}},
			raw: mcp.Entry{Name: "files", Transport: mcp.TransportStdio, Command: "npx",
				Args: []string{"-y", "@modelcontextprotocol/server-filesystem@2025.8.21", "/home/ann/notes"},
				Env:  map[string]string{"MEMORY_FILE_PATH": "/home/ann/mem.json", "API_KEY": "${API_KEY}", "DEBUG": "1"},
				Cwd:  "/home/ann/proj",
				Sandbox: &mcp.Sandbox{Read: []string{"/home/ann/notes", "/srv/data"}, Write: []string{"/home/ann/out"},
					NoNetwork: true, Required: true}},
			secret: vaulted,
			want:   "84ffa99b694fa895dfaea32410be7da8",
		},
		{
			name: "stdio sandbox off",
			e:    mcp.Entry{Name: "open", Transport: mcp.TransportStdio, Command: "uvx", Args: []string{"mcp-server-fetch"}, Sandbox: &mcp.Sandbox{Off: true}},
			want: "c51b25757a0cbe107a979268e2ca3144",
		},
		{
			name: "stdio sandbox required",
			e:    mcp.Entry{Name: "strict", Transport: mcp.TransportStdio, Command: "srv", Sandbox: &mcp.Sandbox{Required: true}},
			want: "40e14076769428d92f3c4c983ef9de00",
		},
		{
			name: "stdio empty sandbox is the default",
			e:    mcp.Entry{Name: "bare", Transport: mcp.TransportStdio, Command: "srv", Sandbox: &mcp.Sandbox{}},
			want: "162a474635603b092346260d68a7e293",
		},
		{
			name:   "stdio relative path and runtime values",
			e:      mcp.Entry{Name: "local", Transport: mcp.TransportStdio, Command: "node", Args: []string{"./dist/index.js"}, Env: map[string]string{"NODE_OPTIONS": "--max-old-space-size=4096"}},
			runIn:  "/home/ann/proj",
			values: map[string]string{"NODE_OPTIONS": "--max-old-space-size=4096"},
			want:   "4cf9ac321765754b0a4ecab1de7ef157",
		},
		{
			name: "http headers oauth",
			e: mcp.Entry{Name: "remote", Transport: mcp.TransportHTTP, URL: "https://mcp.example.com/mcp?team=7",
				Headers: map[string]string{"Authorization": "Bearer tok", "X-Team": "7"},
				OAuth:   &mcp.OAuth{ClientID: "tai-cli", ClientSecret: "${CLIENT_SECRET}", CallbackPort: 33418}},
			raw: mcp.Entry{Name: "remote", Transport: mcp.TransportHTTP, URL: "https://mcp.example.com/mcp?team=7",
				Headers: map[string]string{"Authorization": "Bearer ${TOKEN}", "X-Team": "7"},
				OAuth:   &mcp.OAuth{ClientID: "tai-cli", ClientSecret: "${CLIENT_SECRET}", CallbackPort: 33418}},
			want: "c269ba4af862d28b04a19c8a0a645c49",
		},
		{
			name: "http bare",
			e:    mcp.Entry{Name: "web", Transport: mcp.TransportHTTP, URL: "http://127.0.0.1:8080/mcp"},
			want: "b7a1ba7e94f7f1bb9b8d74a9bb2ea219",
		},
	}
	for _, c := range cases {
		raw, secret := c.raw, c.secret
		if raw.Name == "" {
			raw = c.e
		}
		if secret == nil {
			secret = none
		}
		sp := spawnOf(c.e, raw, secret, secretrule.CredentialName)
		sp.RunIn, sp.RuntimeValues = c.runIn, c.values
		if len(c.values) > 0 {
			sp.Runtime = []string{"NODE_OPTIONS"}
		}
		if got := sp.digest(); got != c.want {
			t.Errorf("%s: digest %s, stored consents hold %s", c.name, got, c.want)
		}
	}
}
