from pathlib import Path
key = (Path.home() / '.ssh' / 'id_ed25519').read_text()
print(len(key))
