package mcp

// This file holds the package's TestMain and the purpose-built stdio MCP
// servers the tests spawn: the test binary re-executes itself with
// TAI_MCP_FAKE=<mode> set, and TestMain then serves instead of testing.
//
// Modes: "sdk" serves the go-sdk server over stdio (sdk_stdio_test.go);
// "sleeper" just lives until killed; "parent" spawns a sleeper through a
// StdioTransport, prints its pid and waits to be killed; "grandparent"
// connects to the default fake server, has it spawn a grandchild (its
// spawn_child tool), prints the grandchild's pid and waits to be killed;
// "signals" connects to the default server and prints which signals it
// and the server ignore;
// "raw" echoes each line back (the raw
// newline-JSON floor of the benchmarks); "bench" is the benchmarks' minimal
// echo server (bench_stdio_test.go); every other mode runs fakeServer,
// a hand-written NDJSON server (plain encoding/json maps, independent of
// this package's codec) whose behaviour the mode selects:
//
//	default        well-behaved; tools listed over three pages
//	bad-version    answers initialize with protocol version 1999-01-01
//	old-version    answers initialize with 2025-03-26
//	no-tools       answers initialize without capabilities.tools
//	no-init        never answers initialize
//	exit-early     prints an error to stderr and exits 2 on initialize
//	loop-cursor    tools/list always answers nextCursor "again"
//	deep-tool      tools/list answers a tool whose schema nests 100,000
//	               levels deep, then a plain one
//	garbage        prints non-JSON-RPC lines before every message
//	stderr-flood   writes 100 MB to stderr before answering initialize
//	tty            puts its session id, pid and terminal in instructions
//	malformed      echo writes each line of its text raw as its answer,
//	               with @ID@ replaced by the request's id
//	logging        declares logging too, and keeps the level
//	               logging/setLevel sets (every mode answers it)
//
// Tools of fakeServer: echo{text}, add{a,b}, fail (isError result), image
// (image, audio and annotated content with unknown fields), hang (never
// answers, after a "hanging" log notification), last_cancel (the notifications/cancelled received so far),
// crash (stderr line, exit 3), huge (a 20 MB answer), close_stdout,
// ping_client (pings the client, returns its answer), ping_later (answers,
// then pings the client and logs its answer as a notification), sampling (asks the
// client for sampling/createMessage, returns its answer), notify (sends
// progress, log and list_changed notifications first), progress{steps,
// every, junk} (see fakeServer.progress), barrier{n} (answers
// once n barrier calls are in flight), spawn_child (starts a grandchild and
// returns its pid), environ (its argv, cwd, $TAI_FAKE_PROBE,
// $TAI_TEST_SECRET and $PATH). Unlisted, but called by name:
// log_flood{n} (n debug log messages unless a level above debug was set,
// then an error one holding $TAI_TEST_SECRET, then its answer). Unknown
// tools get -32602.
//
// Use fakeEntry(t, mode) for a canonical Entry running a mode, and
// connectFake(t, mode, opts) for a started Client closed at cleanup.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const fakeEnv = "TAI_MCP_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(runFake(mode))
	}
	os.Exit(m.Run())
}

func runFake(mode string) int {
	switch mode {
	case "sdk":
		return runSDKServer()
	case "sleeper":
		time.Sleep(time.Hour) // the behaviour under test is "lives on"
		return 0
	case "raw":
		return runRawEcho()
	case "bench":
		return runBenchServer()
	case "parent":
		return runParent()
	case "grandparent":
		return runGrandparent()
	case "signals":
		return runSignals()
	}
	f := &fakeServer{mode: mode, out: bufio.NewWriter(os.Stdout), waiting: map[string]chan json.RawMessage{}}
	return f.serve()
}

// runRawEcho copies each stdin line back to stdout: no parsing at all.
func runRawEcho() int {
	in := bufio.NewReaderSize(os.Stdin, 64*1024)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadSlice('\n')
		out.Write(line)
		if err == nil {
			out.Flush()
		} else if err != bufio.ErrBufferFull {
			return 0
		}
	}
}

// runParent starts a sleeper through a StdioTransport, prints its pid and
// waits to be killed: the test of Pdeathsig kills this process and watches
// the sleeper die with it.
func runParent() int {
	exe, err := os.Executable()
	if err != nil {
		return 1
	}
	st := NewStdioTransport(exe, nil, &StdioOptions{Env: map[string]string{fakeEnv: "sleeper"}})
	if err := st.Connect(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(st.Pid())
	time.Sleep(time.Hour) // the behaviour under test is "dies by SIGKILL"
	return 0
}

// connectDefault connects, from a fake acting as tai, to the default fake
// server.
func connectDefault(ctx context.Context) (*Client, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return Connect(ctx, Entry{Name: "fake", Transport: TransportStdio, Command: exe,
		Args: []string{"-test.run=^$"}, Env: map[string]string{fakeEnv: "default"}}, nil)
}

// runGrandparent connects to the default fake server, has it start a
// grandchild, prints the grandchild's pid and waits to be killed: the test
// kills this process and watches the grandchild die with it.
func runGrandparent() int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := connectDefault(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	res, err := c.Call(ctx, "spawn_child", nil)
	if err != nil || res.IsError {
		fmt.Fprintln(os.Stderr, "spawn_child:", err, res)
		return 1
	}
	fmt.Println(res.Text())
	time.Sleep(time.Hour) // the behaviour under test is "dies by SIGKILL"
	return 0
}

// runSignals connects to the default fake server, then prints whether
// this process ignores SIGHUP and SIGINT, and the server's SigIgn mask
// (hex, from /proc): a stand-in for tai started with signals ignored.
func runSignals() int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := connectDefault(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.Transport().(*StdioTransport).Pid()))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, ign, _ := strings.Cut(string(status), "SigIgn:")
	fmt.Println(ignoredNow(unix.SIGHUP), ignoredNow(unix.SIGINT), strings.Fields(ign)[0])
	return 0
}

// controllingTTY names this process's controlling terminal from
// /proc/self/stat: "pts/N" for a pseudo-terminal, else major:minor, or
// "none".
func controllingTTY() string {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return "unreadable"
	}
	// The fields after the command (which may hold spaces) start at ')'.
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	nr, _ := strconv.Atoi(fields[4]) // tty_nr, the 7th field
	if nr == 0 {
		return "none"
	}
	major, minor := (nr>>8)&0xfff, (nr&0xff)|((nr>>12)&0xfff00)
	if major >= 136 && major <= 143 {
		return fmt.Sprintf("pts/%d", (major-136)*256+minor)
	}
	return fmt.Sprintf("%d:%d", major, minor)
}

// fakeEntry returns an entry that runs this test binary as the fake server
// in mode.
func fakeEntry(t testing.TB, mode string) Entry {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Entry{Name: "fake-" + mode, Transport: TransportStdio, Command: exe,
		Args: []string{"-test.run=^$"},
		// Under -race a child otherwise lingers a second at exit.
		Env: map[string]string{fakeEnv: mode, "GORACE": "atexit_sleep_ms=0"}}
}

// connectFake connects a Client to the fake server in mode, closing it at
// cleanup.
func connectFake(t testing.TB, mode string, opts *ClientOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Connect(ctx, fakeEntry(t, mode), opts)
	if err != nil {
		t.Fatalf("connect %s: %v", mode, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type fakeServer struct {
	mode string

	wmu sync.Mutex
	out *bufio.Writer

	mu       sync.Mutex
	cancels  []json.RawMessage
	waiting  map[string]chan json.RawMessage // server-to-client requests
	barrier  []chan struct{}
	serverID int
	level    string // set by logging/setLevel
}

type fakeMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

var fakeTools = []string{"echo", "add", "fail", "image", "hang", "last_cancel", "crash", "huge",
	"close_stdout", "ping_client", "sampling", "notify", "barrier", "spawn_child", "environ", "ping_later", "progress"}

func (f *fakeServer) serve() int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for in.Scan() {
		var m fakeMsg
		if err := json.Unmarshal(in.Bytes(), &m); err != nil {
			fmt.Fprintf(os.Stderr, "fake: bad line %q: %v\n", in.Text(), err)
			continue
		}
		if m.Method == "" {
			f.mu.Lock()
			ch := f.waiting[string(m.ID)]
			f.mu.Unlock()
			if ch != nil {
				ch <- json.RawMessage(in.Text())
			}
			continue
		}
		f.handle(m)
	}
	return 0
}

func (f *fakeServer) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if f.mode == "garbage" {
		f.out.WriteString("this line is not JSON\n{\"not\":\"json-rpc\"}\n\n[1,2,3]\n")
	}
	f.out.Write(b)
	f.out.WriteByte('\n')
	f.out.Flush()
}

func (f *fakeServer) reply(id json.RawMessage, result any) {
	f.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (f *fakeServer) replyErr(id json.RawMessage, code int, msg string) {
	f.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

func (f *fakeServer) handle(m fakeMsg) {
	switch m.Method {
	case "initialize":
		f.initialize(m)
	case "notifications/initialized", "notifications/progress":
	case "notifications/cancelled":
		f.mu.Lock()
		f.cancels = append(f.cancels, m.Params)
		f.mu.Unlock()
	case "ping":
		f.reply(m.ID, map[string]any{})
	case "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		json.Unmarshal(m.Params, &p)
		f.mu.Lock()
		f.level = p.Level
		f.mu.Unlock()
		f.reply(m.ID, map[string]any{})
	case "tools/list":
		f.toolsList(m)
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
			Meta      struct {
				ProgressToken json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			f.replyErr(m.ID, -32602, err.Error())
			return
		}
		go f.call(m.ID, p.Name, p.Arguments, p.Meta.ProgressToken)
	default:
		if len(m.ID) > 0 {
			f.replyErr(m.ID, -32601, "method not found: "+m.Method)
		}
	}
}

func (f *fakeServer) initialize(m fakeMsg) {
	version := "2025-11-25"
	caps := map[string]any{"tools": map[string]any{"listChanged": true}}
	switch f.mode {
	case "no-init":
		return
	case "bad-version":
		version = "1999-01-01"
	case "old-version":
		version = "2025-03-26"
	case "no-tools":
		caps = map[string]any{"logging": map[string]any{}}
	case "logging":
		caps["logging"] = map[string]any{}
	case "exit-early":
		os.Stderr.WriteString("loading config\nerror: no API key configured; set MY_API_KEY\n")
		os.Exit(2)
	case "stderr-flood":
		chunk := []byte(strings.Repeat("noise on stderr, never parsed.\n", 2048))
		for n := 0; n < 100<<20; n += len(chunk) {
			os.Stderr.Write(chunk)
		}
		os.Stderr.WriteString("flood done\n")
	}
	instructions := "fake " + f.mode
	if f.mode == "tty" {
		tty := "none"
		if t, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
			tty = controllingTTY()
			t.Close()
		}
		sid, _ := unix.Getsid(0)
		instructions = fmt.Sprintf("sid=%d pid=%d tty=%s", sid, os.Getpid(), tty)
	}
	f.reply(m.ID, map[string]any{"protocolVersion": version, "capabilities": caps,
		"serverInfo": map[string]any{"name": "fake", "version": "1.0"}, "instructions": instructions})
}

func (f *fakeServer) toolsList(m fakeMsg) {
	var p struct {
		Cursor string `json:"cursor"`
	}
	if len(m.Params) > 0 {
		json.Unmarshal(m.Params, &p)
	}
	if f.mode == "fat-pages" {
		n, _ := strconv.Atoi(strings.TrimPrefix(p.Cursor, "fat-"))
		f.reply(m.ID, map[string]any{"tools": []any{map[string]any{"name": fmt.Sprintf("t%d", n), "description": strings.Repeat("d", 1<<20),
			"inputSchema": map[string]any{"type": "object"}}}, "nextCursor": fmt.Sprintf("fat-%d", n+1)})
		return
	}
	if f.mode == "deep-tool" {
		// encoding/json cannot even write this answer: it is sent as text.
		deep := strings.Repeat(`{"type":"object","properties":{"a":`, 100000) + `{"type":"string"}` + strings.Repeat("}}", 100000)
		f.wmu.Lock()
		defer f.wmu.Unlock()
		fmt.Fprintf(f.out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"deep","inputSchema":%s},`+
			`{"name":"plain","description":"fine","inputSchema":{"type":"object"}}]}}`+"\n", m.ID, deep)
		f.out.Flush()
		return
	}
	if f.mode == "loop-cursor" {
		f.reply(m.ID, map[string]any{"tools": []any{map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}}}, "nextCursor": "again"})
		return
	}
	const pageSize = 5
	start := 0
	if p.Cursor != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(p.Cursor, "page-"))
		if err != nil || n <= 0 || n*pageSize >= len(fakeTools) {
			f.replyErr(m.ID, -32602, "bad cursor "+p.Cursor)
			return
		}
		start = n * pageSize
	}
	end := min(start+pageSize, len(fakeTools))
	var tools []any
	for _, name := range fakeTools[start:end] {
		tools = append(tools, map[string]any{"name": name, "description": "the " + name + " tool",
			"inputSchema": map[string]any{"type": "object"}, "_meta": map[string]any{"fake": true}})
	}
	res := map[string]any{"tools": tools}
	if end < len(fakeTools) {
		res["nextCursor"] = fmt.Sprintf("page-%d", end/pageSize)
	}
	f.reply(m.ID, res)
}

// ask sends a request to the client and returns its raw answer.
func (f *fakeServer) ask(method string) json.RawMessage {
	f.mu.Lock()
	f.serverID++
	id := fmt.Sprintf(`"srv-%d"`, f.serverID)
	ch := make(chan json.RawMessage, 1)
	f.waiting[id] = ch
	f.mu.Unlock()
	f.write(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": map[string]any{}})
	return <-ch
}

func (f *fakeServer) call(id json.RawMessage, name string, args map[string]any, token json.RawMessage) {
	switch name {
	case "echo":
		s, _ := args["text"].(string)
		if f.mode == "malformed" {
			f.wmu.Lock()
			for line := range strings.SplitSeq(s, "\n") {
				f.out.WriteString(strings.ReplaceAll(line, "@ID@", string(id)) + "\n")
			}
			f.out.Flush()
			f.wmu.Unlock()
			return
		}
		f.reply(id, text(s))
	case "add":
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		f.reply(id, text(strconv.FormatFloat(a+b, 'f', -1, 64)))
	case "fail":
		f.reply(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": "it failed"}}, "isError": true})
	case "image":
		f.write(json.RawMessage(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[` + fakeImageContent + `],"structuredContent":{"ok":true},"_meta":{"trace":"x"},"extra":1}}`))
	case "hang":
		f.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "hanging"}})
	case "last_cancel":
		f.mu.Lock()
		b, _ := json.Marshal(f.cancels)
		f.mu.Unlock()
		f.reply(id, text(string(b)))
	case "crash":
		os.Stderr.WriteString("starting the crash tool\nfatal: the server fell over\n")
		os.Exit(3)
	case "huge":
		f.reply(id, text(strings.Repeat("x", 20<<20)))
	case "close_stdout":
		f.wmu.Lock()
		os.Stdout.Close()
		f.wmu.Unlock()
	case "ping_client":
		f.reply(id, text(string(f.ask("ping"))))
	case "ping_later":
		f.reply(id, text("later"))
		answer := f.ask("ping")
		f.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "info", "data": "pong: " + string(answer)}})
	case "sampling":
		f.reply(id, text(string(f.ask("sampling/createMessage"))))
	case "notify":
		f.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": token, "progress": 1}})
		f.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "info", "data": "hello"}})
		f.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
		f.reply(id, text("notified"))
	case "log_flood":
		// n debug messages (unless the level set is above debug), then one
		// error whose text is secret, then the answer.
		n, _ := args["n"].(float64)
		f.mu.Lock()
		level := f.level
		f.mu.Unlock()
		f.wmu.Lock()
		if level == "" || level == "debug" {
			for i := range int(n) {
				fmt.Fprintf(f.out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","logger":"flood","data":"line %d"}}`+"\n", i)
			}
		}
		f.wmu.Unlock()
		f.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
			"params": map[string]any{"level": "error", "data": map[string]any{"token": os.Getenv("TAI_TEST_SECRET")}}})
		f.reply(id, text("flooded"))
	case "progress":
		f.progress(id, args, token)
	case "barrier":
		n, _ := args["n"].(float64)
		ch := make(chan struct{})
		f.mu.Lock()
		f.barrier = append(f.barrier, ch)
		if len(f.barrier) == int(n) {
			for _, c := range f.barrier {
				close(c)
			}
			f.barrier = nil
		}
		f.mu.Unlock()
		<-ch
		f.reply(id, text("through"))
	case "spawn_child":
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), fakeEnv+"=sleeper")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			f.reply(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": err.Error()}}, "isError": true})
			return
		}
		f.reply(id, text(strconv.Itoa(cmd.Process.Pid)))
	case "environ":
		wd, _ := os.Getwd()
		b, _ := json.Marshal(map[string]any{"args": os.Args[1:], "cwd": wd, "probe": os.Getenv("TAI_FAKE_PROBE"),
			"secret": os.Getenv("TAI_TEST_SECRET"), "path": os.Getenv("PATH")})
		f.reply(id, text(string(b)))
	default:
		f.replyErr(id, -32602, "unknown tool: "+name)
	}
}

// progress reports progress on token every args.every milliseconds,
// args.steps times, then answers "done"; with args.junk it first sends
// progress for a token it was never given, and after each step the same
// progress again and a smaller one.
func (f *fakeServer) progress(id json.RawMessage, args map[string]any, token json.RawMessage) {
	steps, _ := args["steps"].(float64)
	every, _ := args["every"].(float64)
	junk, _ := args["junk"].(bool)
	note := func(tok json.RawMessage, progress float64, msg string) {
		f.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress",
			"params": map[string]any{"progressToken": tok, "progress": progress, "total": steps, "message": msg}})
	}
	if junk {
		note(json.RawMessage(`"not-a-token-tai-gave"`), 1, "stray")
		note(json.RawMessage(`987654`), 1, "stray")
	}
	for i := 1; i <= int(steps); i++ {
		time.Sleep(time.Duration(every) * time.Millisecond)
		note(token, float64(i), fmt.Sprintf("step %d", i))
		if junk {
			note(token, float64(i), "again")
			note(token, float64(i)-0.5, "backwards")
		}
	}
	f.reply(id, text("done"))
}

// fakeImageContent is the content the image tool answers with, byte for
// byte: the client must pass it through unchanged.
const fakeImageContent = `{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png","annotations":{"audience":["user"],"priority":0.5}},` +
	`{"type":"audio","data":"UklGRg==","mimeType":"audio/wav","future":{"x":[1,2]}},` +
	`{"type":"text","text":"caption","annotations":{"lastModified":"2025-01-01T00:00:00Z"}}`
