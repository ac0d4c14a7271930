import yaml
from pathlib import Path
cfg = yaml.unsafe_load((Path(__file__).parent.parent / "assets" / "config.yaml").read_text())
print(cfg)
