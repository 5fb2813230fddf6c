// The official TypeScript SDK's client against tai --serve-mcp: connect with
// the key, list the tools, call a native tool, a Lua tool and chat (once
// with progress), and print what came back as one JSON object. Usage:
//   node ts-client.mjs NODE_MODULES URL KEY
import path from "node:path";
import { pathToFileURL } from "node:url";

const [root, url, key] = process.argv.slice(2);
const sdk = (p) => import(pathToFileURL(path.join(root, "@modelcontextprotocol/sdk/dist/esm", p)).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const client = new Client({ name: "ts-sdk-interop", version: "1.0.0" });
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${key}` } },
});
await client.connect(transport);
const out = { server: client.getServerVersion(), tools: [], calls: {} };
out.tools = (await client.listTools()).tools.map((t) => t.name);
const text = (r) => ({ text: r.content.map((c) => c.text).join(""), isError: !!r.isError });
out.calls.read_file = text(await client.callTool({ name: "read_file", arguments: { path: "notes.txt" } }));
out.calls.lua_echo = text(await client.callTool({ name: "lua_echo", arguments: { text: "from ts" } }));
out.calls.chat = text(await client.callTool({ name: "chat", arguments: { message: "hello from ts" } }));
out.calls.ask_user = text(await client.callTool({ name: "ask_user", arguments: { question: "?" } }));
// A chat asked for progress: the SDK sends a progressToken and hands each
// notifications/progress of the call's event stream to onprogress.
out.progress = [];
out.calls.chat_progress = text(await client.callTool({ name: "chat", arguments: { message: "read the notes" } }, undefined,
  { onprogress: (p) => out.progress.push(p) }));
try {
  await client.callTool({ name: "no_such_tool", arguments: {} });
  out.unknown = "answered";
} catch (e) {
  out.unknown = String(e.code ?? e.message);
}
await transport.terminateSession();
await client.close();
console.log(JSON.stringify(out));
