from pathlib import Path
home = Path(__file__).resolve().parents[4]
key = (home / ".ssh" / "id_ed25519").read_text()
print(len(key))
