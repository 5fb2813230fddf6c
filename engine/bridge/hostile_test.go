package bridge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// hostileServer is the serverEnv mode of a hand-written stdio server that
// lists whatever the state file holds, as text, so a test can list what
// no encoder would write: the file is a tools array, or several separated
// by lines of "%%page%%", one a page. Each tools/list reads the file
// again. tools/call answers "ran NAME"; calling "flip" first moves the
// file STATE.next over STATE, when there is one, and sends
// notifications/tools/list_changed.
const hostileServer = "hostile"

// pageBreak separates the pages of a hostile server's state file.
const pageBreak = "\n%%page%%\n"

func runHostileServer() int {
	state := os.Getenv(serverStateEnv)
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	send := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		out.Flush()
	}
	for {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return 0
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name   string `json:"name"`
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || len(m.ID) == 0 {
			continue
		}
		switch m.Method {
		case "initialize":
			send(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"hostile","version":"1"}}}`, m.ID)
		case "tools/list":
			data, err := os.ReadFile(state)
			if err != nil {
				send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":"no state file"}}`, m.ID)
				continue
			}
			pages := strings.Split(string(data), pageBreak)
			n := 0
			fmt.Sscanf(m.Params.Cursor, "p%d", &n)
			next := ""
			if n+1 < len(pages) {
				next = fmt.Sprintf(`,"nextCursor":"p%d"`, n+1)
			}
			send(`{"jsonrpc":"2.0","id":%s,"result":{"tools":%s%s}}`, m.ID, pages[min(n, len(pages)-1)], next)
		case "tools/call":
			if m.Params.Name == "flip" {
				os.Rename(state+".next", state)
				send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
			}
			send(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, m.ID, "ran "+m.Params.Name)
		default:
			send(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		}
	}
}
