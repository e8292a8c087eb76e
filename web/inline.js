// inline.js - writes kvplan's single-file page: web/index.html with its
// stylesheet and scripts inlined, and the module built with SINGLE_FILE (its
// .wasm inside as base64), so the one file works opened from disk.
//   node web/inline.js web/index.html build/web/kvplan-inline.js > kvplan-single.html
'use strict';
const fs = require('fs');
const path = require('path');
const [page, moduleJs] = process.argv.slice(2);
const dir = path.dirname(page);
const read = (f) => fs.readFileSync(f, 'utf8');
// a script body must not close its own tag
const script = (js) => '<script>\n' + js.replace(/<\/script/gi, '<\\/script') + '\n</script>';
let html = read(page);
html = html.replace('<link rel="stylesheet" href="style.css">',
                    () => '<style>\n' + read(path.join(dir, 'style.css')) + '\n</style>');
html = html.replace('<script src="kvplan.js"></script>', () => script(read(moduleJs)));
for (const f of ['kvplan_api.js', 'hub.js', 'app.js'])
  html = html.replace(`<script src="${f}"></script>`, () => script(read(path.join(dir, f))));
if (/<script src=|<link rel="stylesheet"/.test(html)) {
  process.stderr.write('inline.js: a file reference is left in ' + page + '\n');
  process.exit(1);
}
process.stdout.write(html);
