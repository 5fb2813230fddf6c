// A real, certified OpenID provider (oidc-provider, with its stock
// interaction policy and development login and consent forms) in front of
// an MCP server built with the TypeScript SDK: the peer of tai's OAuth
// interop test (cmd/tai/oidc_interop_test.go). It prints one JSON line,
// {"mcp": URL, "issuer": URL, "admin": URL}, once both listen on loopback.
//
// The MCP server takes the provider's access tokens for its resource:
// tools/call of "read_note" needs notes:read, "write_note" notes:write
// (403 insufficient_scope otherwise, for a step-up). The admin endpoints
// are the test's: POST /admin/revoke-access revokes the access tokens
// issued so far (their refresh tokens stay good), POST /admin/revoke-grant
// revokes the grants (refresh tokens die too), GET /admin/tokens lists
// every token and code issued by kind, so the test can look for them
// outside the vault.
//
// Usage: node oidc-mcp-server.mjs NODE_MODULES
//
// Environment: OIDC_TOKEN_TTL (seconds, default 6), OIDC_PRE_CLIENT_PORT
// (the loopback port of the pre-registered client's redirect URI),
// OIDC_PRE_CLIENT_SECRET.
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.argv[2];
const load = (p) => import(pathToFileURL(path.join(root, p)).href);
const { default: Provider } = await load('oidc-provider/lib/index.js');
const { McpServer } = await load('@modelcontextprotocol/sdk/dist/esm/server/mcp.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/dist/esm/server/streamableHttp.js');

const ttl = Number(process.env.OIDC_TOKEN_TTL || 6);
const scopes = ['notes:read', 'notes:write'];

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

const asServer = http.createServer();
const mcpServer = http.createServer();
const asPort = await listen(asServer);
const mcpPort = await listen(mcpServer);
const issuer = `http://127.0.0.1:${asPort}`;
const mcpURL = `http://127.0.0.1:${mcpPort}/mcp`;
const prmURL = `http://127.0.0.1:${mcpPort}/.well-known/oauth-protected-resource/mcp`;

const issued = { access_token: [], refresh_token: [], authorization_code: [] };
const grants = new Set();
const accessTokens = new Set();

const clients = [];
if (process.env.OIDC_PRE_CLIENT_PORT) {
  clients.push({
    client_id: 'tai-pre-registered',
    client_secret: process.env.OIDC_PRE_CLIENT_SECRET,
    redirect_uris: [`http://127.0.0.1:${process.env.OIDC_PRE_CLIENT_PORT}/callback`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  });
}

const provider = new Provider(issuer, {
  clients,
  features: {
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (resource !== mcpURL) {
          throw new Provider.errors.InvalidTarget(`unknown resource ${resource}`);
        }
        return { scope: scopes.join(' '), audience: mcpURL, accessTokenTTL: ttl, accessTokenFormat: 'opaque' };
      },
    },
  },
  scopes: ['openid', 'offline_access', ...scopes],
});
for (const kind of ['access_token', 'refresh_token', 'authorization_code']) {
  provider.on(`${kind}.saved`, (t) => issued[kind].push(t.jti));
}
asServer.on('request', provider.callback());

// The MCP server: a fresh SDK server and transport per request (stateless).
function notes() {
  const server = new McpServer({ name: 'oidc-notes', version: '1.0.0' });
  server.registerTool('read_note', { description: 'Reads the note (needs notes:read).' }, async () => ({
    content: [{ type: 'text', text: 'note: hello from the OpenID-protected server' }],
  }));
  server.registerTool('write_note', { description: 'Writes the note (needs notes:write).' }, async () => ({
    content: [{ type: 'text', text: 'note written' }],
  }));
  return server;
}

function challenge(res, status, params) {
  const p = Object.entries({ resource_metadata: prmURL, ...params }).map(([k, v]) => `${k}="${v}"`).join(', ');
  res.writeHead(status, { 'WWW-Authenticate': `Bearer ${p}`, 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ error: params.error || 'invalid_token' }));
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

// tokenScopes returns the scopes of a live access token for this
// resource, or null.
async function tokenScopes(header) {
  const m = /^Bearer (.+)$/.exec(header || '');
  if (!m) return null;
  const at = await provider.AccessToken.find(m[1]);
  if (!at || at.isExpired || at.aud !== mcpURL) return null;
  if (!(await provider.Grant.find(at.grantId))) return null;
  accessTokens.add(m[1]);
  grants.add(at.grantId);
  return new Set((at.scope || '').split(' '));
}

mcpServer.on('request', async (req, res) => {
  try {
    const url = new URL(req.url, mcpURL);
    if (url.pathname === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ resource: mcpURL, authorization_servers: [issuer], scopes_supported: scopes }));
      return;
    }
    if (url.pathname === '/admin/tokens') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(issued));
      return;
    }
    if (url.pathname === '/admin/revoke-access') {
      for (const t of accessTokens) {
        const at = await provider.AccessToken.find(t);
        if (at) await at.destroy();
      }
      res.end('revoked');
      return;
    }
    if (url.pathname === '/admin/revoke-grant') {
      for (const g of grants) {
        const grant = await provider.Grant.find(g);
        if (grant) await grant.destroy();
      }
      res.end('revoked');
      return;
    }
    if (url.pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const held = await tokenScopes(req.headers.authorization);
    if (!held) {
      challenge(res, 401, req.headers.authorization ? { error: 'invalid_token', scope: 'notes:read' } : { scope: 'notes:read' });
      return;
    }
    const raw = req.method === 'POST' ? await readBody(req) : '';
    const body = raw ? JSON.parse(raw) : undefined;
    if (body && body.method === 'tools/call') {
      const need = body.params && body.params.name === 'write_note' ? 'notes:write' : 'notes:read';
      if (!held.has(need)) {
        challenge(res, 403, { error: 'insufficient_scope', scope: [...new Set([...held].filter((s) => scopes.includes(s)).concat(need))].join(' ') });
        return;
      }
    }
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = notes();
    res.on('close', () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  } catch (e) {
    console.error(e);
    if (!res.headersSent) res.writeHead(500).end(String(e));
  }
});

console.log(JSON.stringify({ mcp: mcpURL, issuer, admin: `http://127.0.0.1:${mcpPort}/admin` }));
