// harness.mjs - what kvplan's browser test (tests/web/run.mjs) and bench
// (bench/bench_web.mjs) share: playwright-core, installed into
// tests/web/node_modules on first use (npm, pinned); a static server for
// build/web on 127.0.0.1; the native CLI run with no way to reach a network.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';

const here = path.dirname(new URL(import.meta.url).pathname);
const PW = '1.64.1';

export function playwright() {
  const req = createRequire(path.join(here, 'package.json'));
  try { return req('playwright-core'); } catch { /* install below */ }
  console.error(`web: npm install playwright-core@${PW} (tests/web/node_modules)`);
  execFileSync('npm', ['install', '--prefix', here, '--no-save', '--no-audit', '--no-fund',
                       `playwright-core@${PW}`], { stdio: ['ignore', 'ignore', 'inherit'] });
  return req('playwright-core');
}

const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css',
                '.wasm': 'application/wasm', '.png': 'image/png' };

// routes: extra URL paths served from files (a fake Hub's config.json);
// served.log lists every path asked for
export function serve(dir, routes = {}) {
  const log = [];
  const server = http.createServer((q, r) => {
    const u = decodeURIComponent(new URL(q.url, 'http://x').pathname);
    log.push(u);
    if (routes[u]) {
      r.writeHead(200, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*' });
      r.end(fs.readFileSync(routes[u]));
      return;
    }
    let p = path.join(dir, u);
    if (u.endsWith('/')) p = path.join(p, 'index.html'); // as a static host does
    if (!p.startsWith(dir) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) {
      r.writeHead(404); r.end(); return;
    }
    r.writeHead(200, { 'Content-Type': TYPES[path.extname(p)] || 'application/octet-stream' });
    fs.createReadStream(p).pipe(r);
  });
  server.served = log;
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

// a kvplan binary (or wrapper) from a scratch directory, its network closed
export function runNative(bin, args, cwd) {
  const r = spawnSync(bin, args, {
    cwd, encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd, HF_ENDPOINT: 'http://127.0.0.1:9',
           KVPLAN_OLLAMA_REGISTRY: 'http://127.0.0.1:9' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// tests/remote's fake Hugging Face Hub and CDN (127.0.0.1 and 127.0.0.2),
// with the CORS answers a page meets on huggingface.co, on fixtures built
// into dir; requests() reads its JSON-lines log
export async function fakeHub(root, dir, native, approvedToken) {
  const fx = path.join(dir, 'fx');
  execFileSync('bash', [path.join(root, 'tests/remote/mkfixtures.sh'), fx, native],
               { stdio: ['ignore', 'ignore', 'inherit'] });
  const ports = path.join(dir, 'fake.ports'), log = path.join(dir, 'fake.log');
  const { spawn } = await import('node:child_process');
  const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const proc = spawn(python, [path.join(root, 'tests/remote/fake_remote.py'), '--fixtures', fx,
                                 '--ports-file', ports, '--log', log, '--cors',
                                 '--gated-approved-token', approvedToken],
                     { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let i = 0; i < 600 && !(fs.existsSync(ports) && fs.readFileSync(ports, 'utf8').trim()); i++)
    await new Promise((ok) => setTimeout(ok, 100));
  const [hubPort, cdnPort] = fs.readFileSync(ports, 'utf8').trim().split(' ').map(Number);
  const requests = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '')
    .split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { hub: `http://127.0.0.1:${hubPort}`, cdn: `http://127.0.0.2:${cdnPort}`, requests,
           stop: () => proc.kill('SIGTERM') };
}

// build/kvplan against that Hub, with its own caches under home (run a
// command twice to see the second, cached answer, which the page gives)
export function runNativeHub(bin, args, home, hub, token) {
  const env = { PATH: process.env.PATH, HOME: home, HF_ENDPOINT: hub,
                KVPLAN_OLLAMA_REGISTRY: 'http://127.0.0.1:9' };
  if (token) env.HF_TOKEN = token;
  const r = spawnSync(bin, args, { cwd: home, encoding: 'utf8', env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
