// bench/bench_web.mjs - `make bench-web`: kvplan's page in Debian's chromium
// beside the native CLI, measured in the same run.
//   page ready   navigation to window.kvplan ready (the .wasm fetched,
//                compiled and the catalog listed), median of 5 fresh pages
//   one query    kvplan.run() of a llama.cpp mem query in the page, median of 20
//   native       build/kvplan's whole process for the same query, median of 20
//   node         the node build's whole process (build/web/kvplan), median of 10
// Ratios are against the native process.  No assertion on time: a report.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { playwright, serve } from '../tests/web/harness.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const web = path.join(root, 'build/web');
const QUERY = ['mem', 'qwen3-8b', '--runtime', 'llama.cpp', '-c', '32768', '-np', '4'];

const median = (v) => { const s = [...v].sort((a, b) => a - b); return s[s.length >> 1]; };

function processMs(bin, n, cwd) {
  const t = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(bin, QUERY, { cwd, env: { PATH: process.env.PATH, HOME: cwd } });
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
    if (r.status !== 0) throw new Error(`${bin} exited ${r.status}`);
  }
  return median(t);
}

async function main() {
  const { chromium } = playwright();
  const server = await serve(web);
  const url = `http://127.0.0.1:${server.address().port}/index.html`;
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
                                          args: ['--no-sandbox'] });
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvplan-bench-'));
  try {
    const ready = [];
    let query = [];
    for (let i = 0; i < 5; i++) {
      const ctx = await browser.newContext();
      const page = await ctx.newPage();
      const t0 = Date.now();
      await page.goto(url);
      await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
      ready.push(Date.now() - t0);
      if (i === 0)
        query = await page.evaluate((q) => {
          const t = [];
          for (let k = 0; k < 20; k++) {
            const t0 = performance.now();
            window.kvplan.run(q);
            t.push(performance.now() - t0);
          }
          return t;
        }, QUERY);
      await ctx.close();
    }
    const nat = processMs(path.join(root, 'build/kvplan'), 20, scratch);
    const node = processMs(path.join(web, 'kvplan'), 10, scratch);
    const wasm = fs.statSync(path.join(web, 'kvplan.wasm')).size;
    const row = (what, ms, note) =>
      console.log(`${what.padEnd(34)} ${ms.toFixed(1).padStart(9)} ms ${(ms / nat).toFixed(2).padStart(8)}x  ${note}`);
    console.log(`query: kvplan ${QUERY.join(' ')}`);
    console.log(`page: build/web (kvplan.wasm ${(wasm / 1048576).toFixed(2)} MiB) from 127.0.0.1, chromium headless\n`);
    console.log(`${'what'.padEnd(34)} ${'median'.padStart(12)} ${'x native'.padStart(9)}`);
    row('native CLI, whole process', nat, 'reference, measured in this run');
    row('page ready (fresh page)', median(ready), 'fetch + compile the .wasm, list the catalog');
    row('one query in the page', median(query), 'kvplan.run() once ready');
    row('node build, whole process', node, 'build/web/kvplan (wasm compile each time)');
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
