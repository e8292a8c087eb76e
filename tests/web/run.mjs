// tests/web/run.mjs - `make web-test`: kvplan's page in Debian's chromium,
// driven by playwright-core, against the native build/kvplan.
//
//  1. window.kvplan.run(args) equals build/kvplan's stdout, stderr and exit
//     status byte for byte, for a fixed set of commands (theory, llama.cpp,
//     vLLM, fit, compare, techniques, plot and its SVG, an error), and for
//     every catalog model under every runtime;
//  2. the form: choose a model, set flags, press Memory, read the table;
//  3. a pasted config.json;
//  4. a dropped shape-twin GGUF larger than 4 GiB (sparse on disk), of which
//     the page reads the header only;
//  5. screenshots at desktop and phone widths (build/web/screenshot*.png);
//  6. the single-file page opened from disk (file://);
//  7. Hub names the page fetches from tests/remote's fake Hub and CDN (with
//     CORS): a config.json, a GGUF header by range requests (>4 GiB, split),
//     a gated model with a token, a missing repo, a pasted -hf line; and
//     pasted startup logs;
//  8. the page reloaded offline, from its service worker's cache.
//
// The page is served from build/web by a server this script starts on
// 127.0.0.1, the fake Hub on 127.0.0.1 and 127.0.0.2; nothing else is contacted.  playwright-core is installed into
// tests/web/node_modules on first use (npm, pinned).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { playwright, serve, runNative, fakeHub, runNativeHub } from './harness.mjs';

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, '../..');
const web = path.join(root, 'build/web');
const native = path.join(root, 'build/kvplan');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const cli = (args, cwd) => runNative(native, args, cwd);
const TOKEN = 'hf_webtest_approved';

let pass = 0, fail = 0;
function check(name, ok, why = '') {
  if (ok) { pass++; console.log(`PASS web: ${name}`); }
  else { fail++; console.log(`FAIL web: ${name}${why ? ': ' + why : ''}`); }
}

function firstDiff(a, b) {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return `at byte ${i}: page ${JSON.stringify(a.slice(i, i + 60))} vs cli ${JSON.stringify(b.slice(i, i + 60))}`;
}

function same(name, page, want) {
  for (const k of ['code', 'stdout', 'stderr'])
    if (page[k] !== want[k]) {
      check(name, false, k === 'code' ? `exit ${page.code} vs ${want.code}` : `${k} ${firstDiff(String(page[k]), String(want[k]))}`);
      return;
    }
  check(name, true);
}

const COMMANDS = [
  ['mem', 'qwen3-8b', '-c', '32k', '--runtime', 'theory'],
  ['mem', 'gemma-3-4b-it', '--runtime', 'llama.cpp', '-c', '32768', '-np', '1', '-fa', 'on'],
  ['mem', 'qwen3.5-9b', '--runtime', 'llama.cpp', '-c', '128k', '-np', '4', '--json'],
  ['mem', 'qwen3-8b', '--runtime', 'vllm', '--gpu', 'H100', '--json'],
  ['mem', 'deepseek-v2-lite', '--runtime', 'vllm', '--max-model-len', '32768'],
  ['fit', 'qwen3-8b', '--memory', '24GiB', '--runtime', 'all'],
  ['compare', 'qwen3-8b', 'gemma-3-4b-it', 'qwen3.5-9b', '-c', '4k,32k,128k'],
  ['techniques', 'qwen3-8b', '--runtime', 'vllm'],
  ['techniques', 'gemma-3-4b-it', '--runtime', 'llama.cpp', '--json'],
  ['show', 'jamba-v0.1'],
  ['--', 'vllm', 'serve', 'qwen3-8b', '--max-model-len', '32768', '--kv-cache-dtype', 'fp8'],
  ['--', 'llama-server', '-m', 'twin.gguf', '-c', '16384', '-np', '2', '-fa', 'on'],
  ['mem', 'no-such-model'],
];

async function main() {
  for (const f of ['index.html', 'kvplan.js', 'kvplan.wasm'])
    if (!fs.existsSync(path.join(web, f))) { console.error(`web-test: no build/web/${f}: run make web`); process.exit(2); }
  const { chromium } = playwright();
  const server = await serve(web);
  const url = `http://127.0.0.1:${server.address().port}/index.html`;
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'kvplan-web-'));
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('pageerror', (e) => check('no page error', false, String(e)));
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
    check(`the page is ready (${Date.now() - t0} ms)`, true);

    // 1. byte for byte (a small twin GGUF for the pasted llama-server line)
    const tiny = fs.readFileSync(path.join(root, 'tests/data/twin/tiny-gemma3.gguf'));
    fs.writeFileSync(path.join(scratch, 'twin.gguf'), tiny);
    await page.evaluate((b) => window.kvplan.writeFile('/twin.gguf', new Uint8Array(b)), [...tiny]);
    for (const args of COMMANDS) {
      const got = await page.evaluate((a) => window.kvplan.run(a), args);
      same(`run(${args.join(' ')})`, got, cli(args, scratch));
    }
    // every catalog model under every runtime (and the JSON of each), one
    // comparison per model so that a difference names it
    const names = JSON.parse(cli(['models', '--json'], scratch).stdout).models.map((m) => m.name);
    const every = [];
    for (const n of names)
      for (const rt of ['theory', 'llama.cpp', 'vllm', 'all'])
        every.push(['mem', n, '--runtime', rt, '-c', '32k'], ['mem', n, '--runtime', rt, '--json']);
    const pageAll = await page.evaluate((list) => list.map((a) => window.kvplan.run(a)), every);
    const differ = [];
    every.forEach((a, i) => {
      const w = cli(a, scratch), g = pageAll[i];
      if (g.code !== w.code || g.stdout !== w.stdout || g.stderr !== w.stderr) differ.push(a.join(' '));
    });
    check(`every catalog model (${names.length}) under theory, llama.cpp, vLLM and all, text and JSON: ` +
          `${every.length} runs equal the CLI's`, names.length > 40 && differ.length === 0, differ.slice(0, 5).join('; '));

    const svgPage = await page.evaluate(() => {
      const r = window.kvplan.run(['plot', 'qwen3.5-9b', '-o', 'p.svg', '--force']);
      r.svg = new TextDecoder().decode(window.kvplan.readFile('/p.svg'));
      return r;
    });
    const svgCli = cli(['plot', 'qwen3.5-9b', '-o', 'p.svg', '--force'], scratch);
    same('run(plot qwen3.5-9b -o p.svg)', { code: svgPage.code, stdout: svgPage.stdout, stderr: svgPage.stderr }, svgCli);
    check('the plot SVG equals the CLI\'s', svgPage.svg === fs.readFileSync(path.join(scratch, 'p.svg'), 'utf8'));

    // 2. the form
    await page.selectOption('#model', 'gemma-3-4b-it');
    await page.selectOption('#runtime', 'llama.cpp');
    await page.fill('#ctx', '16384');
    await page.fill('#np', '2');
    await page.selectOption('#ctk', 'q8_0');
    await page.selectOption('#ctv', 'q8_0');
    await page.selectOption('#fa', 'on');
    await page.click('button[data-cmd="mem"]');
    const shown = await page.textContent('#cmd');
    const formOut = await page.textContent('#stdout');
    const want = cli(['mem', 'gemma-3-4b-it', '--runtime', 'llama.cpp', '-c', '16384', '-np', '2',
                      '-ctk', 'q8_0', '-ctv', 'q8_0', '-fa', 'on'], scratch);
    check('form: the command shown is the flags set',
          shown === 'kvplan mem gemma-3-4b-it --runtime llama.cpp -c 16384 -np 2 -ctk q8_0 -ctv q8_0 -fa on', shown);
    check('form: the table is the CLI\'s', formOut === want.stdout, firstDiff(formOut, want.stdout));
    check('form: the link restores the query', (await page.evaluate(() => location.hash)).includes('model=gemma-3-4b-it'));
    await page.screenshot({ path: path.join(web, 'screenshot.png'), fullPage: true });

    // 3. a pasted config.json
    const cfg = fs.readFileSync(path.join(root, 'data/models/Qwen__Qwen3-8B.json'), 'utf8');
    await page.click('button[data-tab="config"]');
    await page.fill('#config', cfg);
    await page.selectOption('#runtime', 'theory');
    await page.selectOption('#ctk', 'f16');
    await page.selectOption('#ctv', 'f16');
    await page.fill('#ctx', '32k');
    await page.click('button[data-cmd="mem"]');
    fs.writeFileSync(path.join(scratch, 'config.json'), cfg);
    const cfgOut = (await page.textContent('#stdout')).split('/in/config.json').join('config.json');
    const cfgWant = cli(['mem', 'config.json', '--runtime', 'theory', '-c', '32k', '-ctk', 'f16', '-ctv', 'f16'], scratch);
    check('pasted config.json: the CLI\'s table', cfgWant.code === 0 && cfgOut === cfgWant.stdout, firstDiff(cfgOut, cfgWant.stdout));

    // 4. a twin GGUF over 4 GiB, dropped: its header only is read
    const twin = path.join(scratch, 'qwen3-8b-twin.gguf');
    const tw = cli(['twin', 'qwen3-8b', '-o', twin], scratch);
    const size = fs.statSync(twin).size;
    check(`twin written, ${(size / 2 ** 30).toFixed(1)} GiB apparent size`, tw.code === 0 && size > 2 ** 32, tw.stderr);
    await page.click('button[data-tab="gguf"]');
    await page.selectOption('#runtime', 'llama.cpp');
    await page.fill('#ctx', '32768');
    await page.fill('#np', '1');
    await page.selectOption('#ctk', 'f16');
    await page.selectOption('#ctv', 'f16');
    await page.setInputFiles('#ggufs', twin);
    await page.waitForFunction(() => /header only read/.test(document.getElementById('gguf-name').textContent), null, { timeout: 60000 });
    const ggOut = (await page.textContent('#stdout')).split('/in/qwen3-8b-twin.gguf').join(twin);
    const ggErr = await page.textContent('#stderr');
    const ggWant = cli(['mem', twin, '--runtime', 'llama.cpp', '-c', '32768', '-np', '1', '-ctk', 'f16', '-ctv', 'f16', '-fa', 'on'], scratch);
    check('dropped >4 GiB GGUF: the CLI\'s table', ggWant.code === 0 && ggOut === ggWant.stdout,
          ggErr + firstDiff(ggOut, ggWant.stdout));

    // 5. a phone's width
    await page.setViewportSize({ width: 390, height: 844 });
    await page.click('button[data-tab="catalog"]');
    await page.click('button[data-cmd="mem"]');
    await page.screenshot({ path: path.join(web, 'screenshot-phone.png'), fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check('phone width: nothing but the tables scrolls sideways', overflow <= 0, `${overflow} px wider`);

    // 7. Hub names, fetched by the page from tests/remote's fake Hub and CDN
    //    (127.0.0.1, 127.0.0.2, answering CORS as huggingface.co does): the
    //    page gives what build/kvplan gives against the same Hub from its
    //    caches (the second run of a command; the first says "by HTTP range
    //    requests" where the page's, laid into the same caches, says "from
    //    kvplan's header cache")
    const fh = await fakeHub(root, scratch, native, TOKEN);
    try {
      const home = path.join(scratch, 'home');
      fs.mkdirSync(home);
      const nat = (a, token) => { runNativeHub(native, a, home, fh.hub, token); return runNativeHub(native, a, home, fh.hub, token); };
      const fromPage = () => fh.requests().filter((q) => /Chrome|Mozilla/.test(q.user_agent || ''));
      const hubPage = await browser.newPage();
      hubPage.on('pageerror', (e) => check('no page error (Hub page)', false, String(e)));
      const settled = () => hubPage.waitForFunction(() => !/^fetching/.test(document.getElementById('cmd').textContent) &&
                                                     document.body.dataset.ready === '1', null, { timeout: 60000 });
      const press = async (cmd) => {
        await hubPage.evaluate(() => { document.getElementById('cmd').textContent = 'fetching'; });
        await hubPage.click(`button[data-cmd="${cmd}"]`);
        await settled();
        return { cmd: await hubPage.textContent('#cmd'), stdout: await hubPage.textContent('#stdout'),
                 stderr: await hubPage.textContent('#stderr') };
      };
      await hubPage.goto(`${url}#hub=${encodeURIComponent(fh.hub)}` +
                         '&tab=catalog&repo=Qwen/Qwen3-8B&runtime=theory&ctx=32k&ctk=f16&ctv=f16&cmd=mem');
      await settled();
      let want = nat(['mem', 'Qwen/Qwen3-8B', '--runtime', 'theory', '-c', '32k', '-ctk', 'f16', '-ctv', 'f16']);
      let got = await hubPage.textContent('#stdout');
      check('Hub ORG/NAME: the fetched config.json gives the CLI\'s table', want.code === 0 && got === want.stdout,
            (await hubPage.textContent('#stderr')) + firstDiff(got, want.stdout));
      check('Hub ORG/NAME: the command shown is the CLI\'s',
            (await hubPage.textContent('#cmd')) === 'kvplan mem Qwen/Qwen3-8B --runtime theory -c 32k -ctk f16 -ctv f16');
      const asked = fromPage().length;
      await press('show');
      check('Hub ORG/NAME: fetched once, however many queries (model info, config.json)',
            asked >= 2 && fromPage().length === asked, `${asked} then ${fromPage().length} requests`);

      // a GGUF over 4 GiB by its quant: the header only, by range requests
      await hubPage.selectOption('#runtime', 'llama.cpp');
      await hubPage.fill('#ctx', '32768');
      await hubPage.fill('#repo', 'kvtest/Qwen3-8B-GGUF:Q8_0');
      const before = fromPage().length;
      got = await press('mem');
      want = nat(['mem', 'kvtest/Qwen3-8B-GGUF:Q8_0', '--runtime', 'llama.cpp', '-c', '32768', '-np', '1',
                  '-ctk', 'f16', '-ctv', 'f16']);
      check('Hub ORG/NAME:QUANT: the GGUF header read by range gives the CLI\'s table',
            want.code === 0 && got.stdout === want.stdout, got.stderr + firstDiff(got.stdout, want.stdout));
      const cdn = fromPage().slice(before).filter((q) => q.listener === 'cdn' && q.method === 'GET');
      const taken = cdn.reduce((n, q) => n + q.bytes, 0);
      check(`Hub ORG/NAME:QUANT: bounded range requests only (${taken} bytes in ${cdn.length})`,
            cdn.length >= 1 && cdn[0].range === 'bytes=0-262143' && cdn.every((q) => /^bytes=\d+-\d+$/.test(q.range || '')) &&
            taken <= 262144 * cdn.length,
            JSON.stringify(cdn.map((q) => q.range)));

      // a split GGUF: every shard's header; the card names them as the CLI does
      await hubPage.fill('#repo', 'kvtest/Qwen3-8B-GGUF:BF16');
      got = await press('show');
      want = nat(['show', 'kvtest/Qwen3-8B-GGUF:BF16']);
      check('Hub split GGUF: the card equals the CLI\'s, every shard read', want.code === 0 && got.stdout === want.stdout,
            got.stderr + firstDiff(got.stdout, want.stdout));

      // a gated model: refused without a token, read with one; the token
      // goes to the Hub, never to the CDN, never into the link
      await hubPage.fill('#repo', 'test/gated:Q4_K_M');
      got = await press('mem');
      check('Hub gated GGUF without a token: the Hub\'s 401, said as a gated model',
            got.stdout === '' && /HTTP 401.*gated/.test(got.stderr), got.stderr);
      await hubPage.fill('#token', TOKEN);
      got = await press('mem');
      want = nat(['mem', 'test/gated:Q4_K_M', '--runtime', 'llama.cpp', '-c', '32768', '-np', '1',
                  '-ctk', 'f16', '-ctv', 'f16'], TOKEN);
      check('Hub gated GGUF with a token: the CLI\'s table', want.code === 0 && got.stdout === want.stdout,
            got.stderr + firstDiff(got.stdout, want.stdout));
      const leaked = fromPage().filter((q) => q.auth && q.listener !== 'hub');
      check('Hub token: sent to the Hub only, never to the CDN', fromPage().some((q) => q.auth) && leaked.length === 0,
            JSON.stringify(leaked));
      check('Hub token: not in the link', !(await hubPage.evaluate(() => location.href)).includes(TOKEN));

      // a missing repo: the library's own error line
      await hubPage.fill('#repo', 'kvtest/no-such-model:Q4_K_M');
      got = await press('mem');
      want = nat(['mem', 'kvtest/no-such-model:Q4_K_M']);
      check('Hub missing repo: the CLI\'s error', got.stdout === '' && got.stderr === want.stderr && want.code !== 0,
            `${got.stderr} vs ${want.stderr}`);

      // a pasted llama-server -hf line
      const line = ['llama-server', '-hf', 'kvtest/Qwen3-8B-GGUF:Q4_K_M', '-c', '16384', '-np', '2'];
      await hubPage.click('button[data-tab="paste"]');
      await hubPage.fill('#paste', line.join(' '));
      got = await press('mem');
      want = nat(['--'].concat(line));
      check('pasted llama-server -hf: the CLI\'s answer', want.code === 0 && got.stdout === want.stdout,
            got.stderr + firstDiff(got.stdout, want.stdout));

      // split shards dropped together: the page reads shard 1 and finds the
      // rest by name, as the CLI does on disk
      const split = path.join(scratch, 'fx/hf/kvtest/Llama-3.2-1B-Instruct-GGUF/Q4_K_M');
      const shards = fs.readdirSync(split).filter((f) => f.endsWith('.gguf')).sort().map((f) => path.join(split, f));
      await hubPage.click('button[data-tab="gguf"]');
      await hubPage.fill('#ctx', '8192');
      await hubPage.setInputFiles('#ggufs', shards);
      await hubPage.waitForFunction(() => /header only read/.test(document.getElementById('gguf-name').textContent), null, { timeout: 60000 });
      await settled();
      got = await press('show');
      want = cli(['show', shards[0]], scratch);
      const splitOut = got.stdout.split('/in/').join(split + '/');
      check(`dropped split GGUF (${shards.length} shards): the CLI's card`, shards.length === 2 && want.code === 0 &&
            splitOut === want.stdout, got.stderr + firstDiff(splitOut, want.stdout));

      // pasted startup logs: checked against the Catalog tab's model
      for (const [log, model] of [['qwen3-8b-10000-np3-q8.log', 'qwen3-8b'], ['vllm-qwen3-8b-a100.log', 'qwen3-8b']]) {
        const text = fs.readFileSync(path.join(root, 'tests/data/logs', log), 'utf8');
        await hubPage.click('button[data-tab="catalog"]');
        await hubPage.fill('#repo', '');
        await hubPage.selectOption('#model', model);
        await hubPage.click('button[data-tab="paste"]');
        await hubPage.fill('#paste', text);
        got = await press('mem');
        fs.writeFileSync(path.join(home, 'startup.log'), text.replace(/\n?$/, '\n'));
        want = nat(['check', 'startup.log', model]);
        const norm = (x) => x.split('/in/startup.log').join('startup.log');
        check(`pasted log ${log}: kvplan check's answer`, got.cmd === `kvplan check /in/startup.log ${model}` &&
              norm(got.stdout) === want.stdout && want.stdout !== '', got.cmd + ' ' + firstDiff(norm(got.stdout), want.stdout));
      }
    } finally {
      fh.stop();
    }

    // 8. offline once loaded: the service worker serves the page again
    const ctx = await browser.newContext();
    const off = await ctx.newPage();
    await off.goto(url);
    await off.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
    const cached = await off.evaluate(() => Promise.race([
      navigator.serviceWorker.ready.then(() => caches.open('kvplan-v2'))
        .then((c) => new Promise((ok) => { const t = setInterval(() => c.keys().then((k) => {
          if (k.length >= 8) { clearInterval(t); ok(true); } }), 100); })),
      new Promise((ok) => setTimeout(() => ok(false), 30000))]));
    check('the service worker caches the page\'s 8 files', cached);
    await ctx.setOffline(true);
    await off.reload();
    await off.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
    const offArgs = ['mem', 'llama-3.1-8b', '--runtime', 'llama.cpp', '-c', '8k'];
    same('offline, reloaded from the service worker: run(' + offArgs.join(' ') + ')',
         await off.evaluate((a) => window.kvplan.run(a), offArgs), cli(offArgs, scratch));
    await ctx.close();

    // 6. the single file, opened from disk
    const single = await browser.newPage();
    await single.goto('file://' + path.join(web, 'kvplan-single.html'));
    await single.waitForFunction(() => document.body.dataset.ready === '1', null, { timeout: 60000 });
    const args = ['mem', 'qwen3-next-80b-a3b-thinking', '--runtime', 'llama.cpp', '-c', '64k', '-np', '2'];
    same('single file from disk: run(' + args.join(' ') + ')',
         await single.evaluate((a) => window.kvplan.run(a), args), cli(args, scratch));
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  console.log(`\n${pass} passed, ${fail} failed`);
  process.exit(fail ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(1); });
