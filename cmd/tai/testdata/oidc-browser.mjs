// A browser driven by a script, for tai's OAuth interop test: tai runs
// `$BROWSER URL`; this follows the authorization request through
// oidc-provider's development login form (any login) and consent form,
// keeping the cookies, as a person would, up to the client's redirect.
//
//   node oidc-browser.mjs URL
//
// Environment: OIDC_BROWSER_DELAY_MS waits that long first (a person who
// takes their time); OIDC_BROWSER_PRINT=FILE writes the final redirect
// URL to FILE instead of following it (a browser on another machine,
// whose address bar the person copies); OIDC_BROWSER_LOG=FILE appends one
// line per run (the host it was sent to), so the test can count them.
import { appendFileSync, writeFileSync } from 'node:fs';

const start = process.argv[2];
const delay = Number(process.env.OIDC_BROWSER_DELAY_MS || 0);
const cookies = new Map();

function cookieHeader() {
  return [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}

function keepCookies(res) {
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair.indexOf('=');
    cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1));
  }
}

async function main() {
  if (process.env.OIDC_BROWSER_LOG) appendFileSync(process.env.OIDC_BROWSER_LOG, `${new URL(start).host}\n`);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  let url = new URL(start);
  let method = 'GET';
  let body;
  for (let step = 0; step < 30; step++) {
    if (url.pathname === '/callback') {
      if (process.env.OIDC_BROWSER_PRINT) {
        writeFileSync(process.env.OIDC_BROWSER_PRINT, `${url}\n`);
        return;
      }
      const res = await fetch(url, { redirect: 'manual' });
      if (res.status !== 200) throw new Error(`the client's redirect answered ${res.status}`);
      return;
    }
    const headers = { cookie: cookieHeader() };
    if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(url, { method, body, headers, redirect: 'manual' });
    keepCookies(res);
    method = 'GET';
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location'), url);
      continue;
    }
    const html = await res.text();
    if (res.status !== 200) throw new Error(`${url.pathname} answered ${res.status}: ${html.slice(0, 300)}`);
    const action = /<form[^>]*action="([^"]+)"/.exec(html);
    const prompt = /name="prompt" value="([^"]+)"/.exec(html);
    if (!action || !prompt) throw new Error(`no login or consent form at ${url.pathname}: ${html.slice(0, 300)}`);
    const form = new URLSearchParams({ prompt: prompt[1] });
    if (prompt[1] === 'login') {
      form.set('login', 'person');
      form.set('password', 'any');
    }
    url = new URL(action[1].replace(/&amp;/g, '&'), url);
    method = 'POST';
    body = form.toString();
  }
  throw new Error('too many steps');
}

main().catch((e) => {
  console.error(`oidc-browser: ${e.message}`);
  process.exit(1);
});
