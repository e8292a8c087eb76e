// bench_gguf.mjs - node-llama-cpp's readGgufFileInfo on one GGUF file, timed
// over many calls in one node process (so start-up and JIT warm-up are not
// counted); prints "median_ms X" for bench_gguf.c.  Metadata and tensor
// infos only, as kvplan's reader: no tensor data is read.
//
//   node bench_gguf.mjs NODE_MODULES_DIR FILE [ITERATIONS]
import {pathToFileURL} from "node:url";
import path from "node:path";

const [nodeModules, file, iterArg] = process.argv.slice(2);
const entry = path.join(nodeModules, "node-llama-cpp", "dist", "index.js");
const {readGgufFileInfo} = await import(pathToFileURL(entry).href);
const iterations = Number(iterArg) || 20;

for (let i = 0; i < 3; i++) // warm-up
    await readGgufFileInfo(file, {logWarnings: false});
const times = [];
for (let i = 0; i < iterations; i++) {
    const t0 = process.hrtime.bigint();
    await readGgufFileInfo(file, {logWarnings: false});
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
times.sort((a, b) => a - b);
const mid = times.length >> 1;
const median = times.length % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
console.log(`median_ms ${median}`);
